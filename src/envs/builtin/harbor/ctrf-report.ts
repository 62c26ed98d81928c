/**
 * Per-test detail from `/logs/verifier/ctrf.json`, the Common Test Report Format that
 * Harbor's task templates write (pytest-json-ctrf): `{"results": {"tool": {...},
 * "summary": {...}, "tests": [{"name", "status", "duration", "message", ...}]}}`.
 *
 * It is a diagnostic beside the reward, never the reward, and the agent could have
 * written or corrupted it: so a missing, garbled or hostile file gives null or whatever
 * entries are well formed — this never throws — and the result is bounded (test count,
 * name and message lengths) before it goes into an episode's stored score.
 */

/** CTRF's statuses; anything else a tool writes counts as "other". */
export type CtrfStatus = "passed" | "failed" | "skipped" | "pending" | "other";

export interface CtrfTest {
  name: string;
  status: CtrfStatus;
  /** CTRF's `duration` (milliseconds), when it is a finite number ≥ 0. */
  durationMs: number | null;
  /** Failure message, cut to `MAX_MESSAGE_CHARS`. */
  message?: string;
}

export interface CtrfReport {
  /** `results.tool.name` ("pytest"). */
  tool: string | null;
  /** The first `MAX_TESTS` well-formed tests, in file order. */
  tests: CtrfTest[];
  /** Counted over every well-formed test, kept or not. */
  summary: Record<CtrfStatus, number> & { total: number };
  /** Tests past `MAX_TESTS` were dropped. */
  truncated: boolean;
}

export const MAX_TESTS = 500;
export const MAX_NAME_CHARS = 300;
export const MAX_MESSAGE_CHARS = 1000;
/** Larger files are not parsed at all. */
export const MAX_CTRF_BYTES = 4 << 20;

const STATUSES: readonly CtrfStatus[] = ["passed", "failed", "skipped", "pending", "other"];

const cut = (text: string, max: number): string => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

function record(value: unknown): Record<string, unknown> | null {
  return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
}

function parseTest(value: unknown): CtrfTest | null {
  const entry = record(value);
  if (!entry || typeof entry.name !== "string") return null;
  const status = typeof entry.status === "string" && (STATUSES as readonly string[]).includes(entry.status) ? (entry.status as CtrfStatus) : "other";
  const duration = typeof entry.duration === "number" && Number.isFinite(entry.duration) && entry.duration >= 0 ? entry.duration : null;
  const test: CtrfTest = { name: cut(entry.name, MAX_NAME_CHARS), status, durationMs: duration };
  if (typeof entry.message === "string" && entry.message) test.message = cut(entry.message, MAX_MESSAGE_CHARS);
  return test;
}

/**
 * The report in `content` (ctrf.json's bytes or text; null when the file is absent), or
 * null when it is not a CTRF report.
 *
 * @example parseCtrfReport('{"results":{"tests":[{"name":"test_even","status":"failed","duration":3}]}}')
 * // { tool: null, tests: [{ name: "test_even", status: "failed", durationMs: 3 }], summary: { failed: 1, total: 1, ... }, truncated: false }
 */
export function parseCtrfReport(content: Uint8Array | string | null | undefined): CtrfReport | null {
  if (content == null) return null;
  const size = typeof content === "string" ? content.length : content.byteLength;
  if (size === 0 || size > MAX_CTRF_BYTES) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(typeof content === "string" ? content : new TextDecoder().decode(content));
  } catch {
    return null;
  }
  const results = record(record(parsed)?.results);
  if (!results || !Array.isArray(results.tests)) return null;
  const toolName = record(results.tool)?.name;
  const summary: CtrfReport["summary"] = { passed: 0, failed: 0, skipped: 0, pending: 0, other: 0, total: 0 };
  const tests: CtrfTest[] = [];
  let truncated = false;
  for (const value of results.tests) {
    const test = parseTest(value);
    if (!test) continue;
    summary[test.status] += 1;
    summary.total += 1;
    if (tests.length < MAX_TESTS) tests.push(test);
    else truncated = true;
  }
  return { tool: typeof toolName === "string" ? cut(toolName, MAX_NAME_CHARS) : null, tests, summary, truncated };
}
