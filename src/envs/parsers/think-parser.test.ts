import { describe, expect, it } from "vitest";
import type { ChatMessage } from "../../protocol/index.js";
import { BoxedParser } from "./boxed.js";
import { PlainParser } from "./plain-parser.js";
import { ThinkParser } from "./think-parser.js";
import { XmlParser } from "./xml-parser.js";

describe("ThinkParser", () => {
  const xml = new ThinkParser({ inner: new XmlParser({ fields: ["answer"] }) });

  it("grades only the text after </think>", () => {
    expect(xml.parseAnswer("<think>maybe <answer>3</answer>?</think>\n<answer>4</answer>")).toBe("4");
    expect(xml.parseAnswer("<think>maybe <answer>3</answer>?</think> no answer tags")).toBeNull();
  });

  it("has no answer while a think block is left open", () => {
    expect(xml.parseAnswer("<think>still going <answer>3</answer>")).toBeNull();
    expect(xml.answerRegion("<think>still going")).toBeNull();
  });

  it("treats a message without think tags as all answer", () => {
    expect(xml.parseAnswer("<answer>5</answer>")).toBe("5");
  });

  it("uses the plain parser by default", () => {
    const plain = new ThinkParser();
    expect(plain.parseAnswer("<think>x</think>\n  Paris \n")).toBe("Paris");
    expect(plain.inner).toBeInstanceOf(PlainParser);
  });

  it("wraps a boxed parser", () => {
    const boxed = new ThinkParser({ inner: new BoxedParser() });
    expect(boxed.parseAnswer("<think>\\boxed{1}</think>The answer is \\boxed{\\frac{2}{3}}")).toBe("\\frac{2}{3}");
  });

  it("looks through messages, keeping tool calls and non-assistant messages as they are", () => {
    const completion: ChatMessage[] = [
      { role: "assistant", content: "<think>call it</think>", tool_calls: [{ id: "c1", type: "function", function: { name: "f", arguments: "{}" } }] },
      { role: "tool", tool_call_id: "c1", content: "<answer>tool text</answer>" },
      { role: "assistant", content: "<think>ok</think><answer>9</answer>" },
    ];
    expect(xml.parseAnswer(completion)).toBe("9");
  });

  it("scores format: half for the think block, half for the inner format", () => {
    expect(xml.formatReward("<think>a</think>\n<answer>b</answer>")).toBe(1);
    expect(xml.formatReward("<answer>b</answer>")).toBe(0.5); // no think block
    expect(xml.formatReward("<think>a</think>\nno tags")).toBeCloseTo(0.5 + 0.5 * 0.8 * 0); // inner: no answer field
    expect(xml.formatReward("<think>a")).toBe(0); // cut off while thinking
    expect(xml.formatReward("<think>a</think><think>b</think><answer>c</answer>")).toBe(0.5); // two blocks
    expect(xml.formatReward("text <think>a</think><answer>c</answer>")).toBe(0.5); // not at the start
    expect(xml.formatReward("<think>a</think>   ")).toBe(0); // nothing after thinking
  });

  it("does not require the think block when told not to", () => {
    const lax = new ThinkParser({ inner: new XmlParser({ fields: ["answer"] }), requireThink: false });
    expect(lax.formatReward("<answer>b</answer>")).toBe(1);
    expect(lax.format).toBe("[<think>…</think>]\n<answer>…</answer>");
    expect(xml.format).toBe("<think>…</think>\n<answer>…</answer>");
  });

  it("supports another tag name", () => {
    const reasoning = new ThinkParser({ tag: "reasoning" });
    expect(reasoning.parseAnswer("<reasoning>r</reasoning>final")).toBe("final");
  });

  it("averages the think score over assistant messages with text", () => {
    const completion: ChatMessage[] = [
      { role: "assistant", content: "<think>a</think><answer>1</answer>" },
      { role: "assistant", content: null, tool_calls: [{ id: "c", type: "function", function: { name: "f", arguments: "{}" } }] },
      { role: "assistant", content: "<answer>2</answer>" },
    ];
    // think: (1 + 0) / 2 over the two messages with text; inner XmlParser averages over all three (1 + 0 + 1) / 3.
    expect(xml.formatReward(completion)).toBeCloseTo(0.5 * 0.5 + 0.5 * (2 / 3));
  });
});

describe("PlainParser", () => {
  it("reads the last non-empty assistant text", () => {
    const parser = new PlainParser();
    expect(parser.parseAnswer([{ role: "assistant", content: " a " }, { role: "assistant", content: "" }])).toBe("a");
    expect(parser.formatReward([{ role: "assistant", content: " a " }, { role: "assistant", content: "" }])).toBe(0);
    expect(parser.parseAnswer("")).toBeNull();
  });
});
