import { describe, expect, it } from "vitest";
import type { ChatMessage } from "../../protocol/index.js";
import { XmlParser } from "./xml-parser.js";

describe("XmlParser", () => {
  const parser = new XmlParser({ fields: ["think", "answer"], optional: ["think"] });

  it("reads each field and trims whitespace around values", () => {
    expect(parser.parse("<think>\n  hm  \n</think>\n<answer>\n 42 \n</answer>")).toEqual({ think: "hm", answer: "42" });
  });

  it("lets the last occurrence of a tag win", () => {
    expect(parser.parse("<answer>1</answer> no wait <answer>2</answer>").answer).toBe("2");
  });

  it("reads an unclosed final tag to the end of the text", () => {
    expect(parser.parse("<answer>1</answer> then <answer> 7 and more").answer).toBe("7 and more");
  });

  it("prefers a closed tag that comes after an earlier unclosed one", () => {
    expect(parser.parse("<answer>draft… <answer>3</answer>").answer).toBe("3");
  });

  it("accepts alternative tag names, the last one written wins", () => {
    const alt = new XmlParser({ fields: [["answer", "final"]] });
    expect(alt.parse("<answer>1</answer><final>2</final>").answer).toBe("2");
    expect(alt.parse("<final>2</final><answer>1</answer>").answer).toBe("1");
    expect(alt.parseAnswer("<final> x ")).toBe("x");
    expect(alt.formatReward("<final>2</final>")).toBe(1);
  });

  it("returns undefined for an absent field and null for a completion without an answer", () => {
    expect(parser.parse("just text").answer).toBeUndefined();
    expect(parser.parseAnswer("just text")).toBeNull();
  });

  it("parses the answer from the last assistant message that has one", () => {
    const completion: ChatMessage[] = [
      { role: "assistant", content: "<answer>first</answer>" },
      { role: "user", content: "<answer>not the model's</answer>" },
      { role: "assistant", content: "no tags this time" },
    ];
    expect(parser.parseAnswer(completion)).toBe("first");
  });

  it("scores format: all fields closed and nothing outside is 1, stray text costs a little, missing fields cost their share", () => {
    const strict = new XmlParser({ fields: ["think", "answer"] });
    expect(strict.formatReward("<think>a</think>\n<answer>b</answer>")).toBe(1);
    expect(strict.formatReward("<think>a</think>\n<answer>b</answer> trailing")).toBeCloseTo(0.8);
    expect(strict.formatReward("<answer>b</answer>")).toBeCloseTo(0.5);
    expect(strict.formatReward("<answer>b")).toBe(0);
    // An optional field absent costs nothing.
    expect(parser.formatReward("<answer>b</answer>")).toBe(1);
  });

  it("averages the format reward over assistant messages", () => {
    const completion: ChatMessage[] = [
      { role: "assistant", content: "<answer>1</answer>" },
      { role: "assistant", content: "nothing" },
    ];
    expect(parser.formatReward(completion)).toBeCloseTo(0.5);
    expect(parser.formatReward([])).toBe(0);
  });

  it("publishes its format, marking optional fields", () => {
    expect(parser.format).toBe("[<think>…</think>]\n<answer>…</answer>");
  });
});
