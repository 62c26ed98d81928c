import { describe, expect, it } from "vitest";
import { HarborRewardError, type HarborRewardErrorCode } from "./errors.js";
import { MAX_REWARD_FILE_BYTES, parseCtrfReport, parseRewardFiles, type RewardFiles } from "./reward-files.js";

const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);

function failure(files: Partial<RewardFiles>, rewardKey?: string): HarborRewardError {
  try {
    parseRewardFiles({ rewardJson: null, rewardTxt: null, ...files }, rewardKey ? { rewardKey } : {});
  } catch (err) {
    expect(err).toBeInstanceOf(HarborRewardError);
    return err as HarborRewardError;
  }
  throw new Error("expected a HarborRewardError");
}

const codeOf = (files: Partial<RewardFiles>): HarborRewardErrorCode => failure(files).code;

describe("parseRewardFiles", () => {
  it("reads reward.json: `reward` is the reward, the other keys are metrics", () => {
    expect(parseRewardFiles({ rewardJson: bytes('{"reward": 0.5, "tests_passed": 3, "tests_total": 6}'), rewardTxt: null })).toEqual({
      reward: 0.5,
      metrics: { tests_passed: 3, tests_total: 6 },
      source: "reward.json",
    });
  });

  it("prefers reward.json to reward.txt, as Harbor does", () => {
    expect(parseRewardFiles({ rewardJson: '{"reward": 1}', rewardTxt: "0" }).reward).toBe(1);
  });

  it("does not fall back to reward.txt when reward.json is present but invalid", () => {
    const err = failure({ rewardJson: "{not json", rewardTxt: "1" });
    expect([err.code, err.file]).toEqual(["reward_file_invalid", "reward.json"]);
  });

  it("reads reward.txt as {reward: x}, with Python float() syntax", () => {
    expect(parseRewardFiles({ rewardJson: null, rewardTxt: bytes("1\n") })).toEqual({ reward: 1, metrics: {}, source: "reward.txt" });
    const values = ["0.25", " -1.5 ", "+3", "1e-3", ".5", "5.", "1_000.5"].map((t) => parseRewardFiles({ rewardJson: null, rewardTxt: t }).reward);
    expect(values).toEqual([0.25, -1.5, 3, 0.001, 0.5, 5, 1000.5]);
  });

  it("neither file: reward_file_missing", () => {
    const err = failure({});
    expect(err.code).toBe("reward_file_missing");
    expect(err.message).toMatch(/neither \/logs\/verifier\/reward\.json nor \/logs\/verifier\/reward\.txt/);
  });

  it("an empty or blank file: reward_file_empty, for either file", () => {
    expect(codeOf({ rewardJson: "" })).toBe("reward_file_empty");
    expect(codeOf({ rewardJson: bytes(" \n") })).toBe("reward_file_empty");
    expect(codeOf({ rewardTxt: new Uint8Array(0) })).toBe("reward_file_empty");
    // An empty reward.json is not skipped in favour of reward.txt.
    expect(failure({ rewardJson: "", rewardTxt: "1" }).file).toBe("reward.json");
  });

  it("reward.txt that is not one finite number: reward_file_invalid", () => {
    for (const text of ["nan", "inf", "-Infinity", "0.5 0.5", "1\n2", "one", "1__0", "_1", "0x10", "1e999"]) {
      expect([text, codeOf({ rewardTxt: text })]).toEqual([text, "reward_file_invalid"]);
    }
  });

  it("reward.json that is not an object of name → finite number: reward_file_invalid", () => {
    for (const text of ["[1]", "1", "null", '"1"', '{"reward": "1"}', '{"reward": true}', '{"reward": null}', '{"reward": 1, "x": [1]}', '{"reward": 1e999}', '{"reward": NaN}']) {
      expect([text, codeOf({ rewardJson: text })]).toEqual([text, "reward_file_invalid"]);
    }
  });

  it("reward.json without a `reward` key is invalid, naming its keys, unless the caller names the key", () => {
    const err = failure({ rewardJson: '{"accuracy": 0.8, "f1": 0.7}' });
    expect(err.code).toBe("reward_file_invalid");
    expect(err.message).toMatch(/no "reward" key \(keys: "accuracy", "f1"\)/);
    expect(failure({ rewardJson: "{}" }).message).toMatch(/it is empty/);
    expect(parseRewardFiles({ rewardJson: '{"accuracy": 0.8, "f1": 0.7}', rewardTxt: null }, { rewardKey: "accuracy" })).toEqual({ reward: 0.8, metrics: { f1: 0.7 }, source: "reward.json" });
  });

  it("refuses bytes that are not UTF-8 and files past the size cap", () => {
    expect(codeOf({ rewardTxt: new Uint8Array([0xff, 0xfe, 0x31]) })).toBe("reward_file_invalid");
    expect(failure({ rewardTxt: new Uint8Array(MAX_REWARD_FILE_BYTES + 1).fill(0x31) }).message).toMatch(/more than/);
  });

  it("strips a UTF-8 byte order mark", () => {
    expect(parseRewardFiles({ rewardJson: null, rewardTxt: new Uint8Array([0xef, 0xbb, 0xbf, 0x31]) }).reward).toBe(1);
  });
});

describe("parseCtrfReport", () => {
  const report = {
    results: {
      tool: { name: "pytest" },
      summary: { tests: 4, passed: 1, failed: 1, skipped: 1, other: 1 },
      tests: [
        { name: "test_a", status: "passed", duration: 12 },
        { name: "test_b", status: "failed", duration: 3.5, message: "AssertionError: 3.5 != 2.5", trace: "long trace" },
        { name: "test_c", status: "skipped", duration: -1 },
        { name: "test_d", status: "flaky" },
        { status: "passed" },
        "not a test",
      ],
    },
  };

  it("keeps each well-formed test compactly and counts statuses", () => {
    expect(parseCtrfReport(JSON.stringify(report))).toEqual({
      tool: "pytest",
      tests: [
        { name: "test_a", status: "passed", durationMs: 12 },
        { name: "test_b", status: "failed", durationMs: 3.5, message: "AssertionError: 3.5 != 2.5" },
        { name: "test_c", status: "skipped", durationMs: null },
        { name: "test_d", status: "other", durationMs: null },
      ],
      summary: { passed: 1, failed: 1, skipped: 1, pending: 0, other: 1, total: 4 },
      truncated: false,
    });
  });

  it("returns null, never throws, for a missing or garbled file", () => {
    for (const content of [null, undefined, "", "{", "[]", "null", '{"results": {}}', '{"results": {"tests": {}}}', bytes("\u0000garbage")]) {
      expect(parseCtrfReport(content)).toBeNull();
    }
  });

  it("bounds what it keeps", () => {
    const many = { results: { tests: Array.from({ length: 600 }, (_, i) => ({ name: `t${i}`, status: "passed", message: "x".repeat(5000) })) } };
    const parsed = parseCtrfReport(bytes(JSON.stringify(many)));
    expect(parsed?.tests).toHaveLength(500);
    expect(parsed?.summary.total).toBe(600);
    expect(parsed?.truncated).toBe(true);
    expect(parsed?.tests[0]?.message?.length).toBe(1000);
  });
});
