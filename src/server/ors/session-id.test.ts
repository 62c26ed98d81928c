import { describe, expect, it } from "vitest";
import { ORS_SESSION_ID } from "../../protocol/ors.js";
import { fresh, issuedTo, newSessionId, SESSION_ID_TTL_MS } from "./session-id.js";

const alice = { name: "alice", admin: false };
const bob = { name: "bob", admin: false };

describe("ORS session ids", () => {
  it("are episode ids that start with their creation time", async () => {
    const now = Date.UTC(2026, 10, 26);
    const sid = await newSessionId(alice, now);
    expect(sid).toMatch(ORS_SESSION_ID);
    expect(Number.parseInt(sid.slice(3, 15), 16)).toBe(now);
    const many = new Set(await Promise.all(Array.from({ length: 1000 }, () => newSessionId(alice, now))));
    expect(many.size).toBe(1000);
  });

  it("pass the check for the tenant they were given to, and for no other", async () => {
    const sid = await newSessionId(alice);
    expect(await issuedTo(alice, sid)).toBe(true);
    expect(await issuedTo(bob, sid)).toBe(false);
    expect(await issuedTo({ name: "alice", admin: true }, sid)).toBe(true);
  });

  it("an id changed in any digit, made up, or malformed fails the check", async () => {
    const sid = await newSessionId(alice);
    for (let i = 3; i < sid.length; i++) {
      const digit = sid[i] === "0" ? "1" : "0";
      const changed = sid.slice(0, i) + digit + sid.slice(i + 1);
      expect([changed, await issuedTo(alice, changed)]).toEqual([changed, false]);
    }
    for (const made of ["ep_" + "0".repeat(32), "ep_0123456789abcdef0123456789abcdef", sid.toUpperCase(), `${sid}0`, sid.slice(3), ""]) {
      expect([made, await issuedTo(alice, made)]).toEqual([made, false]);
    }
  });

  it("open an episode only within the hour after they were given", async () => {
    const now = Date.UTC(2026, 10, 26);
    const sid = await newSessionId(alice, now);
    expect(fresh(sid, now)).toBe(true);
    expect(fresh(sid, now + SESSION_ID_TTL_MS)).toBe(true);
    expect(fresh(sid, now + SESSION_ID_TTL_MS + 1)).toBe(false);
    expect(fresh(sid, now - 60_000)).toBe(true);
    expect(fresh(sid, now - 60 * 60_000)).toBe(false);
  });
});
