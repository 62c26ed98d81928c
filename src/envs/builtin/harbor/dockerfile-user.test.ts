import { describe, expect, it } from "vitest";
import { dockerfileUser } from "./dockerfile-user.js";

describe("dockerfileUser", () => {
  it("is null for an image that stays root", () => {
    expect(dockerfileUser("FROM debian\nRUN true\n")).toBeNull();
    expect(dockerfileUser("FROM debian\nUSER app\nUSER root\n")).toBeNull();
    expect(dockerfileUser("FROM debian\nUSER 0\n")).toBeNull();
  });

  it("takes the final stage's last USER, continuation lines joined", () => {
    expect(dockerfileUser("FROM debian AS build\nUSER builder\nFROM debian\nRUN useradd app\nUSER app\n")).toBe("app");
    expect(dockerfileUser("FROM debian AS build\nUSER builder\nFROM debian\n")).toBeNull();
    expect(dockerfileUser("FROM debian\nuser \\\n  1000:1000\n")).toBe("1000:1000");
  });

  it("refuses a USER it cannot know at build time", () => {
    expect(() => dockerfileUser("FROM debian\nARG U=app\nUSER $U\n")).toThrow(/build variable/);
  });
});
