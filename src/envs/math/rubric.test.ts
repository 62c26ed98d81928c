import { describe, expect, it } from "vitest";
import { rowsDataset } from "../dataset.js";
import { singleTurnEnv } from "../define.js";
import { scoreCompletion } from "../engine.js";
import { XmlParser } from "../parsers/xml-parser.js";
import { mathRubric } from "./rubric.js";
import { verifyMath } from "./verify.js";

const parser = new XmlParser({ fields: ["answer"], answerField: "answer" });
const envWith = (rubric: ReturnType<typeof mathRubric>) =>
  singleTurnEnv({ id: "m", version: "1", description: "d", parser, dataset: rowsDataset({ train: [{ prompt: "p", answer: "1/2" }] }), rubric });

describe("mathRubric", () => {
  it("scores the parser's answer by verifyMath, with the format reward beside it", async () => {
    const env = envWith(mathRubric());
    const right = await scoreCompletion(env, { prompt: "p", completion: "<answer>\\frac{2}{4}</answer>", answer: "1/2" });
    expect(right.components.map((c) => [c.name, c.score, c.weight])).toEqual([["correct", 1, 1], ["format", 1, 0.1]]);
    expect(right.metrics).toMatchObject({ answered: 1 });
    const wrong = await scoreCompletion(env, { prompt: "p", completion: "<answer>0.49</answer>", answer: "1/2" });
    expect(wrong.components[0]?.score).toBe(0);
    const none = await scoreCompletion(env, { prompt: "p", completion: "1/2", answer: "1/2" });
    expect([none.components[0]?.score, none.metrics?.answered]).toEqual([0, 0]);
  });

  it("reads a boxed answer out of the whole completion with answerFrom: completion", async () => {
    const env = envWith(mathRubric({ answerFrom: "completion", formatWeight: 0 }));
    const boxed = await scoreCompletion(env, { prompt: "p", completion: "Halving 1 gives $\\frac12$, so the answer is $\\boxed{0.5}$.", answer: "$\\frac{1}{2}$" });
    expect(boxed.components[0]?.score).toBe(1);
    const otherBox = await scoreCompletion(env, { prompt: "p", completion: "First $\\frac12$... no: $\\boxed{\\frac{1}{3}}$.", answer: "1/2" });
    expect(otherBox.components[0]?.score).toBe(0);
  });

  it("passes the precision on: 0.3333 is 1/3 at 4 places, not at the default 6", async () => {
    const at4 = envWith(mathRubric({ precision: 4 }));
    const at6 = envWith(mathRubric());
    const item = { prompt: "p", completion: "<answer>0.3333</answer>", answer: "1/3" };
    expect((await scoreCompletion(at4, item)).components[0]?.score).toBe(1);
    expect((await scoreCompletion(at6, item)).components[0]?.score).toBe(0);
  });
});

describe("verifyMath", () => {
  it("says what it extracted from each side", () => {
    expect(verifyMath("#### 42", "So she has 40 + 2 = 42 apples.")).toMatchObject({ equal: true, reference: "42", candidate: "42" });
    expect(verifyMath("1", "no number here")).toMatchObject({ equal: false, reference: "1", candidate: "no number here", method: "text" });
  });

  it("takes the number an answer phrase names, not the last one", () => {
    expect(verifyMath("5", "The answer is 5, not 6.").equal).toBe(true);
    expect(verifyMath("6", "The answer is 5, not 6.").equal).toBe(false);
  });

  it("keeps labelled equations with different labels apart", () => {
    expect(verifyMath("$x = 3$", "$y = 3$").equal).toBe(false);
    expect(verifyMath("$f(x)=1$", "$g(x)=1$").equal).toBe(false);
    expect(verifyMath("$x = 3$", "$3$").equal).toBe(true);
  });

  it("reads plain numbers only with the expr target, LaTeX only with the latex target", () => {
    expect(verifyMath("1000.99", "it is 1,000.99 dollars", { targets: ["expr"] }).equal).toBe(true);
    expect(verifyMath("$9$", "Answer $9$", { targets: ["expr"] }).equal).toBe(true);
    expect(verifyMath("$\\frac{1}{2}$", "$\\frac{1}{2}$", { targets: ["latex"] }).equal).toBe(true);
    expect(verifyMath("2", "we get 2 here", { targets: ["latex"] }).equal).toBe(false);
  });

  it("compares variables by name unless strict is false", () => {
    expect(verifyMath("$f(x)$", "$f(y)$").equal).toBe(false);
    expect(verifyMath("$f(x)$", "$f(y)$", { strict: false }).equal).toBe(true);
    expect(verifyMath("$x+y$", "$a+2b$", { strict: false }).equal).toBe(false);
    expect(verifyMath("$x^2$", "$t$", { strict: false }).equal).toBe(false);
  });

  it("reads bare LaTeX references (no $…$), the way edgegym datasets write them", () => {
    const equal: [string, string][] = [
      ["-7/2", "-3\\frac{1}{2}"],
      ["1", "\\sin^2(x)+\\cos^2(x)"],
      ["\\sec^2 y", "\\tan^2 y + 1"],
      ["3", "\\log_2 8"],
      ["x \\geq 5", "5 \\leq x"],
      ["[-2,7]", "x \\in [-2,7]"],
      ["(5,2),(7,2)", "p=5,q=2;p=7,q=2"],
      ["1 \\leq |z| \\leq 2", "[-2,-1] \\cup [1,2]"],
      ["0 \\leq |z| < 2", "(-2,2)"],
      ["\\begin{bmatrix}1 & 2\\end{bmatrix}", "\\begin{pmatrix}1 & 2\\end{pmatrix}"],
      ["\\begin{pmatrix}3 & 4 \\\\ 1 & 2\\end{pmatrix}", "\\begin{pmatrix}0 & 1 \\\\ 1 & 0\\end{pmatrix} \\begin{pmatrix}1 & 2 \\\\ 3 & 4\\end{pmatrix}"],
    ];
    const unequal: [string, string][] = [
      ["-5/2", "-3\\frac{1}{2}"],
      ["x \\geq 5", "x \\leq 5"],
      ["(5,2),(7,2)", "p=5,q=2;p=7,q=3"],
      ["1 \\leq |z| \\leq 2", "[1,2]"],
      ["1 < |z| \\leq 2", "[-2,-1] \\cup [1,2]"],
      ["0 \\leq |z| < 2", "[-2,2]"],
      ["1 < |z| \\leq 2", "[-2,-1] \\cup [1,2]"],
      ["(5,2),(7,2)", "p=5,q=2;q=7,p=2"],
      ["\\begin{bmatrix}1 & 2\\end{bmatrix}", "\\begin{pmatrix}2 & 1\\end{pmatrix}"],
      // Matrix arithmetic is evaluated, so a wrong sum or product is caught, not waved through.
      ["\\begin{pmatrix}6 & 8 \\\\ 10 & 13\\end{pmatrix}", "\\begin{pmatrix}1 & 2 \\\\ 3 & 4\\end{pmatrix} + \\begin{pmatrix}5 & 6 \\\\ 7 & 8\\end{pmatrix}"],
      ["\\begin{pmatrix}1 & 2 \\\\ 3 & 4\\end{pmatrix}", "\\begin{pmatrix}0 & 1 \\\\ 1 & 0\\end{pmatrix} \\begin{pmatrix}1 & 2 \\\\ 3 & 4\\end{pmatrix}"],
    ];
    expect(equal.filter(([g, c]) => !verifyMath(g, c).equal)).toEqual([]);
    expect(unequal.filter(([g, c]) => verifyMath(g, c).equal)).toEqual([]);
  });
});
