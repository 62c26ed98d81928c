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
