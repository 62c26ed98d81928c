import { describe, expect, it } from "vitest";
import { BoxedParser, extractBoxed } from "./boxed.js";

describe("extractBoxed", () => {
  it("reads a simple box", () => {
    expect(extractBoxed("The answer is \\boxed{42}.")).toBe("42");
  });

  it("matches nested braces", () => {
    expect(extractBoxed("$\\boxed{\\frac{1}{2}}$")).toBe("\\frac{1}{2}");
    expect(extractBoxed("\\boxed{\\left\\{ x : x^{2} = 1 \\right\\}}")).toBe("\\left\\{ x : x^{2} = 1 \\right\\}");
    expect(extractBoxed("\\boxed{{a}{b{c}}}")).toBe("{a}{b{c}}");
  });

  it("takes the last box, and the one before when the last is unclosed", () => {
    expect(extractBoxed("\\boxed{1} or rather \\boxed{2}")).toBe("2");
    expect(extractBoxed("\\boxed{1} or rather \\boxed{2")).toBe("1");
  });

  it("accepts \\fbox and a space before the brace, and trims", () => {
    expect(extractBoxed("\\fbox{ 7 }")).toBe("7");
    expect(extractBoxed("\\boxed {x+1}")).toBe("x+1");
  });

  it("returns null without a box", () => {
    expect(extractBoxed("42")).toBeNull();
    expect(extractBoxed("\\boxed{")).toBeNull();
  });
});

describe("BoxedParser", () => {
  const parser = new BoxedParser();
  it("parses the last box across messages and rewards a box in the final message", () => {
    const completion = [
      { role: "assistant" as const, content: "\\boxed{3}" },
      { role: "tool" as const, tool_call_id: "c", content: "\\boxed{99}" },
      { role: "assistant" as const, content: "so that's it" },
    ];
    expect(parser.parseAnswer(completion)).toBe("3");
    expect(parser.formatReward(completion)).toBe(0);
    expect(parser.formatReward("\\boxed{3}")).toBe(1);
  });
});

describe("extractBoxed on adversarial input (one pass, same answers)", () => {
  it("100,000 unclosed boxes (minutes when each box scanned to the end) give null; a closed one before them still counts", () => {
    expect(extractBoxed("\\boxed{".repeat(100_000))).toBeNull();
    expect(extractBoxed("\\boxed{7} then " + "\\boxed{".repeat(100_000))).toBe("7");
    expect(extractBoxed("\\boxed{1}".repeat(50_000))).toBe("1");
  });

  /** The former per-box scan, the reference on small inputs. */
  function extractByScan(text: string): string | null {
    const starts = [...text.matchAll(/\\(?:boxed|fbox)\s*\{/g)].map((m) => m.index + m[0].length);
    for (let k = starts.length - 1; k >= 0; k--) {
      let depth = 1;
      for (let i = starts[k] as number; i < text.length; i++) {
        if (text[i] === "\\") {
          i++;
          continue;
        }
        if (text[i] === "{") depth++;
        else if (text[i] === "}" && --depth === 0) return text.slice(starts[k], i).trim();
      }
    }
    return null;
  }

  it("agrees with the per-box scan on random brace soup", () => {
    const pieces = ["\\boxed{", "\\fbox {", "{", "}", "\\", "x", " "];
    let seed = 11;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let t = 0; t < 3000; t++) {
      const text = Array.from({ length: Math.floor(next() * 14) }, () => pieces[Math.floor(next() * pieces.length)]).join("");
      expect(extractBoxed(text), JSON.stringify(text)).toBe(extractByScan(text));
    }
  });

  it("nested, escaped and unclosed boxes read as before", () => {
    expect(extractBoxed("\\boxed{\\frac{1}{2}} and \\boxed{3")).toBe("\\frac{1}{2}");
    expect(extractBoxed("\\boxed{a \\} b}")).toBe("a \\} b");
    expect(extractBoxed("\\boxed{x \\boxed{y} z}")).toBe("y"); // the last box wins, nested or not
    expect(extractBoxed("} \\fbox {2}")).toBe("2");
    expect(extractBoxed("\\boxed{7} then \\boxed{\\boxed{")).toBe("7");
    expect(extractBoxed("\\\\boxed{5}")).toBe("5");
  });
});
