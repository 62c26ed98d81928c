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

describe("XmlParser on adversarial tag soup (linear, same answers)", () => {
  /** formatReward as it was written with lazy regexes: the reference for the linear scan. */
  function formatByRegex(parser: XmlParser, text: string): number {
    const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    let present = 0;
    let stripped = text;
    const required = parser.fields.filter(([name]) => name !== "think").length;
    for (const names of parser.fields) {
      const hit = names.find((n) => new RegExp(`<${esc(n)}>[\\s\\S]*?</${esc(n)}>`).test(text));
      if (hit) {
        if (names[0] !== "think") present++;
        stripped = stripped.replace(new RegExp(`<${esc(hit)}>[\\s\\S]*?</${esc(hit)}>`, "g"), "");
      }
    }
    return (required === 0 ? 1 : present / required) * (stripped.trim().length === 0 ? 1 : 0.8);
  }

  it("gives the regex reference's format reward on random tag soup", () => {
    const parser = new XmlParser({ fields: ["think", "answer"], optional: ["think"] });
    const pieces = ["<answer>", "</answer>", "<think>", "</think>", "x", " ", "<answer", "answer>"];
    let seed = 7;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let t = 0; t < 3000; t++) {
      const text = Array.from({ length: Math.floor(next() * 12) }, () => pieces[Math.floor(next() * pieces.length)]).join("");
      expect(parser.formatReward(text), JSON.stringify(text)).toBe(formatByRegex(parser, text));
    }
  });

  it("60,000 unclosed openings (4 s with the lazy regex) parse and score", () => {
    const parser = new XmlParser({ fields: ["think", "answer"], optional: ["think"] });
    expect(parser.formatReward("<answer>".repeat(60_000))).toBe(0);
    expect(parser.formatReward("<answer>x</answer>" + "<answer>".repeat(60_000))).toBe(0.8);
    expect(parser.parseAnswer("<answer>".repeat(60_000))).toBe("");
  });
});
