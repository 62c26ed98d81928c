import { describe, expect, it } from "vitest";
import { verifyMath } from "./verify.js";

// Notation added for the last two misses of math-verify's corpus (tests/test_yujianll.py:20,
// tests/test_numina_cases.py:121), each with unequal twins: a reading that makes more pairs
// equal must not make a wrong answer right.
const equal = (reference: string, candidate: string): boolean => verifyMath(reference, candidate).equal;

describe("sums and products", () => {
  it("are equal when their bodies are, over the same index and bounds", () => {
    expect(equal("$F_n = \\sum_{k=0}^{n-1} F_k F_{n-k-1}$", "$F_n = \\sum_{k=0}^{n-1} F_{n-k-1} F_k$")).toBe(true);
    expect(equal("\\sum_{k=1}^{n} (k^2 + 2k)", "\\sum\\limits_{k=1}^{n} k(k+2)")).toBe(true);
    expect(equal("\\prod_{j=1}^{n} \\frac{j+1}{j}", "\\prod_{j=1}^{n} (1 + \\frac{1}{j})")).toBe(true);
    expect(equal("2\\sum_{k=1}^{n} k + 1", "1 + 2 \\sum_{k=1}^{n} k")).toBe(true);
  });

  it("are unequal when the body, the index, the bounds or the operator differ", () => {
    expect(equal("$F_n = \\sum_{k=0}^{n-1} F_k F_{n-k-1}$", "$F_n = \\sum_{k=0}^{n-1} F_k F_{n-k}$")).toBe(false);
    expect(equal("\\sum_{k=1}^{n} k", "\\sum_{k=0}^{n} k")).toBe(false);
    expect(equal("\\sum_{k=1}^{n} k", "\\sum_{k=1}^{n+1} k")).toBe(false);
    // Σ_k k is n(n+1)/2; Σ_j k is n·k: the index is part of the sum.
    expect(equal("\\sum_{k=1}^{n} k", "\\sum_{j=1}^{n} k")).toBe(false);
    expect(equal("\\sum_{k=1}^{n} k", "\\prod_{k=1}^{n} k")).toBe(false);
    expect(equal("\\sum_{k=1}^{n} k + 1", "\\sum_{k=1}^{n} (k + 1)")).toBe(false);
    expect(equal("\\sum_{k=1}^{n} k", "n")).toBe(false);
  });
});

describe("braced subscripts", () => {
  it("name one variable each, the same on both sides", () => {
    expect(equal("a_{n+1} = 2a_n", "a_{n+1} = a_n + a_n")).toBe(true);
    expect(equal("x_{1} + x_{2}", "x_2 + x_1")).toBe(true);
    expect(equal("a_{n+1} = 2a_n", "a_{n-1} = 2a_n")).toBe(false);
    expect(equal("a_{n+1} = 2a_n", "a_{n+1} = 2a_{n}+1")).toBe(false);
  });
});

describe("a function's value named at different arguments", () => {
  it("compares the values when the argument does not occur in them", () => {
    expect(equal("\\\\boxed{W(n) = 1 \\\\text{ and } W(n) = -1", "W(x)=1orW(x)=-1")).toBe(true);
    expect(equal("f(n) = 3", "f(x) = 3")).toBe(true);
    expect(equal("W(n) = 1 \\text{ and } W(n) = -1", "W(x)=1orW(x)=-2")).toBe(false);
    expect(equal("f(n) = 3", "g(x) = 3")).toBe(false);
    // The argument in the value: an equation, not a constant (f(t) = t·y against f(t) = x·y).
    expect(equal("f(x) = xy", "f(n) = xy")).toBe(false);
  });

  it("reads `or`/`and` glued between relations as the connective, and only there", () => {
    expect(verifyMath("x=1 or x=2", "x=1orx=2").candidate).toBe("x=1 or x=2");
    expect(verifyMath("5", "12order").candidate).not.toContain(" or ");
  });
});

// Issue 28's notation (its corpus cases are in issue-28-cases.json): the edges of each reading.
describe("issue 28's readings, where they stop", () => {
  it("reads the lines after \"Answer:\" as one answer only when they are math without prose", () => {
    expect(verifyMath("x^2+2x+1", "Answer:\nx^2\n+ 2x\n+ 1").candidate).toBe("x^2 + 2x + 1");
    expect(verifyMath("12", "Answer:\n12 apples\n\nWe used 7 + 5 = 12.").candidate).toBe("12");
    expect(verifyMath("12", "Answer:\n\n12\n\nCheck: 7 + 5 = 12").candidate).toBe("12");
    // On its own line after the anchor: the same-line readings decide, as before.
    expect(verifyMath("5/2", "Answer: 5/2 = 2.5").candidate).toBe("2.5");
  });

  it("reads `**` as a power only between two operands, not as markdown's bold", () => {
    expect(equal("x^2", "x**2")).toBe(true);
    expect(equal("5", "The answer is **5**.")).toBe(true);
    expect(equal("25", "**5**2")).toBe(false);
  });

  it("keeps `\\overline` on letters a segment, and `…` a decimal only at the end", () => {
    expect(equal("\\overline{AB}", "\\overline{AB}")).toBe(true);
    expect(equal("\\frac{1}{3}", "0.\\overline{3}")).toBe(true);
    expect(verifyMath("\\frac{1}{3}", "0.3333\\ldots", { precision: 4 }).equal).toBe(true);
    expect(equal("1, 2, 3", "1, 2, 3, \\ldots")).toBe(false);
  });

  it("reads a bare decimal comma only against a reference that is a decimal", () => {
    expect(equal("1.22", "1,22")).toBe(true);
    expect(equal("122", "1,22")).toBe(false);
    expect(equal("\\{1, 22\\}", "1,22")).toBe(true);
    expect(equal("1.25", "1,250")).toBe(false);
  });

  it("reads ratios only between numbers, and two clock times as written", () => {
    expect(equal("7:32", "14:64")).toBe(true);
    expect(equal("12:00", "1:00")).toBe(false);
    expect(equal("3:45", "3:45")).toBe(true);
    expect(equal("a:b", "2a:2b")).toBe(false);
    expect(equal("V_1:V_2=11:21", "33:63")).toBe(true);
  });

  it("reads degrees as the angle against radians, and keeps the percentage figure's sign droppable", () => {
    expect(equal("\\frac{\\pi}{2}", "$90 \\text{ degrees}$")).toBe(true);
    expect(equal("90^\\circ", "90")).toBe(true);
    expect(equal("\\frac{\\pi}{2}", "90")).toBe(false);
    expect(equal("12.5", "12.5\\%")).toBe(true);
    expect(equal("33\\frac{1}{3}\\%", "100/3")).toBe(true);
    expect(equal("0.5", "1/2\\%")).toBe(false);
  });

  it("reads a grouped amount with its currency or unit, and nothing that is a list", () => {
    expect(equal("1250", "€1,250")).toBe(true);
    expect(equal("1250", "1,250 USD")).toBe(true);
    expect(equal("1250", "1, 250")).toBe(false);
  });
});
