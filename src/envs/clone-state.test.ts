import { describe, expect, it } from "vitest";
import { cloneState } from "./clone-state.js";

describe("cloneState", () => {
  it("copies JSON values deeply: changing the copy leaves the original", () => {
    const original = { a: 1, b: [1, { c: "x" }], d: null, e: { f: { g: true } } };
    const copy = cloneState(original);
    expect(copy).toEqual(original);
    (copy.b[1] as { c: string }).c = "changed";
    copy.e.f.g = false;
    (copy.b as unknown[]).push(3);
    expect(original).toEqual({ a: 1, b: [1, { c: "x" }], d: null, e: { f: { g: true } } });
    expect(cloneState(7)).toBe(7);
    expect(cloneState(null)).toBe(null);
  });

  it("keeps an own __proto__ key a key, and copies non-JSON objects as structuredClone does", () => {
    const parsed = JSON.parse('{"__proto__": {"polluted": 1}, "x": 2}') as Record<string, unknown>;
    const copy = cloneState(parsed);
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect(Object.keys(copy)).toEqual(["__proto__", "x"]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    const when = { at: new Date(5), m: new Map([[1, 2]]) };
    const c2 = cloneState(when);
    expect(c2.at).toBeInstanceOf(Date);
    expect(c2.at).not.toBe(when.at);
    expect(c2.m.get(1)).toBe(2);
  });
});
