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
}

/**
 * Picks the rollouts worth training on: finished without error, reward at least
 * `minReward`, and with `bestPerExample` only the best of each row, in file order.
 */
export function selectForSft(rows: Iterable<ResultRowLike>, selection: SftSelection): { rows: SftRow[]; report: SftReport } {
  const report: SftReport = { read: 0, kept: 0, failed: 0, belowMinReward: 0, notBestOfExample: 0 };
  const eligible: { row: ResultRowLike; order: number }[] = [];
  for (const row of rows) {
    report.read++;
    if ((row.error !== null && row.error !== undefined) || row.is_completed === false) {
      report.failed++;
      continue;
    }
    if (typeof row.reward !== "number" || !(row.reward >= selection.minReward)) {
      report.belowMinReward++;
      continue;
    }
    eligible.push({ row, order: eligible.length });
  }
  let chosen = eligible;
  if (selection.bestPerExample) {
    const best = new Map<string, { row: ResultRowLike; order: number }>();
    for (const item of eligible) {
      const key = String(item.row.example_id);
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
