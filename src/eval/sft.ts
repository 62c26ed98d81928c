import { contentText, type ChatMessage } from "../protocol/index.js";

/**
 * One training row in the conversational shape TRL's SFTTrainer reads: a `messages`
 * list of `{role, content}` (assistant tool calls and tool results keep their
 * `tool_calls` / `tool_call_id`, which chat templates with tool support render).
 */
export interface SftMessage {
  role: "system" | "user" | "assistant" | "tool";
  content: string;
  tool_calls?: { id: string; type: "function"; function: { name: string; arguments: string } }[];
  tool_call_id?: string;
}

export interface SftRow {
  messages: SftMessage[];
}

export interface SftSelection {
  /** Keep rollouts whose reward is at least this. */
  minReward: number;
  /** Keep only the highest-reward rollout of each row (the first on a tie). */
  bestPerExample: boolean;
}

export interface SftReport {
  read: number;
  kept: number;
  failed: number;
  belowMinReward: number;
  notBestOfExample: number;
}

type Conversation = string | readonly ChatMessage[] | undefined;

function toMessages(value: Conversation, roleForText: "user" | "assistant"): ChatMessage[] {
  if (value === undefined) return [];
  if (typeof value === "string") return [{ role: roleForText, content: value }];
  return [...value];
}

/** A protocol message as SFT text: content always a string, nothing the template does not use. */
export function sftMessage(m: ChatMessage): SftMessage {
  const out: SftMessage = { role: m.role, content: contentText(m.content) };
  if (m.role === "assistant" && m.tool_calls?.length) out.tool_calls = m.tool_calls.map((c) => ({ id: c.id, type: "function", function: { name: c.function.name, arguments: c.function.arguments } }));
  if (m.role === "tool") out.tool_call_id = m.tool_call_id;
  return out;
}

/** The fields of a results.jsonl row this reads; rows written by vf-eval have them too. */
export interface ResultRowLike {
  example_id?: number | string;
  prompt?: Conversation;
  completion?: Conversation;
  reward?: number;
  error?: unknown;
  is_completed?: boolean;
  /** A seated rollout's seats (src/eval/seats.ts): each seat the model played is a conversation of its own. */
  seats?: unknown;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * The conversations of a row: the row itself, or for a seated rollout each seat the model
 * played (the model's seats are `client`'s, with their conversation recorded), with that
 * seat's reward and the seat in its key, so `bestPerExample` picks the best per row and seat.
 */
function conversations(row: ResultRowLike): { row: ResultRowLike; key: string }[] {
  if (isObject(row.seats)) {
    const out: { row: ResultRowLike; key: string }[] = [];
    for (const [seat, s] of Object.entries(row.seats)) {
      if (!isObject(s) || s.player !== "client" || !Array.isArray(s.prompt) || typeof s.reward !== "number") continue;
      out.push({ row: { ...row, prompt: s.prompt as ChatMessage[], completion: (Array.isArray(s.completion) ? s.completion : []) as ChatMessage[], reward: s.reward }, key: `${String(row.example_id)}/${seat}` });
    }
    if (out.length) return out;
  }
  return [{ row, key: String(row.example_id) }];
}

/**
 * Picks the rollouts worth training on: finished without error, reward at least
 * `minReward`, and with `bestPerExample` only the best of each row, in file order. A
 * seated rollout counts once per seat the model played, each with its seat's reward.
 */
export function selectForSft(rows: Iterable<ResultRowLike>, selection: SftSelection): { rows: SftRow[]; report: SftReport } {
  const report: SftReport = { read: 0, kept: 0, failed: 0, belowMinReward: 0, notBestOfExample: 0 };
  const eligible: { row: ResultRowLike; key: string; order: number }[] = [];
  for (const whole of rows) {
    for (const { row, key } of conversations(whole)) {
      report.read++;
      if ((row.error !== null && row.error !== undefined) || row.is_completed === false) {
        report.failed++;
        continue;
      }
      if (typeof row.reward !== "number" || !(row.reward >= selection.minReward)) {
        report.belowMinReward++;
        continue;
      }
      eligible.push({ row, key, order: eligible.length });
    }
  }
  let chosen = eligible;
  if (selection.bestPerExample) {
    const best = new Map<string, { row: ResultRowLike; key: string; order: number }>();
    for (const item of eligible) {
      const key = item.key;
      const held = best.get(key);
      if (!held || (item.row.reward as number) > (held.row.reward as number)) best.set(key, item);
    }
    chosen = [...best.values()].sort((a, b) => a.order - b.order);
    report.notBestOfExample = eligible.length - chosen.length;
  }
  const out = chosen.map(({ row }) => ({ messages: [...toMessages(row.prompt, "user"), ...toMessages(row.completion, "assistant")].map(sftMessage) }));
  report.kept = out.length;
  return { rows: out, report };
}
