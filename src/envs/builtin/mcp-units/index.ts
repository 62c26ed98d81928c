import { contentText, type ChatMessage } from "../../../protocol/index.js";
import { proceduralDataset } from "../../dataset.js";
import { mcpToolEnv } from "../../mcp/mcp-tool-env.js";
import type { McpServerSource } from "../../mcp/servers.js";
import { defineRubric } from "../../rubric.js";
import type { Rng } from "../../rng.js";
import { answerParser } from "../math/index.js";
import { convert, formatNumber, QUANTITIES, TEMPERATURES, UNITS } from "./units.js";

const PHRASES = [
  (v: string, from: string, to: string) => `Convert ${v} ${from} to ${to}.`,
  (v: string, from: string, to: string) => `A reading of ${v} ${from} is how many ${to}?`,
  (v: string, from: string, to: string) => `Express ${v} ${from} in ${to}.`,
];

/** One conversion task; the reference answer is computed with the same table the tool uses. */
export function unitsTask(rng: Rng): { prompt: string; answer: string; info: Record<string, unknown> } {
  const quantity = rng.pick([...QUANTITIES, "temperature"] as const);
  const units: readonly string[] = quantity === "temperature" ? TEMPERATURES : Object.keys(UNITS[quantity]);
  const [from, to] = rng.shuffle(units) as [string, string];
  const value = rng.int(1, 99_999) / 10;
  const answer = formatNumber(convert(value, from, to));
  return { prompt: rng.pick(PHRASES)(String(value), from, to), answer, info: { quantity, from, to, value } };
}

function closeEnough(text: string | null, reference: string): boolean {
  if (text === null) return false;
  const got = Number(text.replace(/,/g, "").trim());
  const want = Number(reference);
  return Number.isFinite(got) && Math.abs(got - want) <= 1e-4 * Math.max(1, Math.abs(want));
}

const assistant = (completion: readonly ChatMessage[]) => completion.filter((m) => m.role === "assistant");

/**
 * Unit conversions with a `convert_units` tool served by an MCP server: the built-in
 * example of `mcpToolEnv`. The Node build runs the server as its own child process over
 * stdio (`mcpUnitsStdioServer` in ./env.node.ts); any MCP server with the same tool will do.
 */
export function createMcpUnitsEnv(server: McpServerSource) {
  return mcpToolEnv({
    id: "mcp-units",
    version: "1.0.0",
    description: "Unit conversions (length, mass, volume, speed, temperature) with a convert_units tool served over MCP by a stdio server edgegym starts; answer in <answer>…</answer>. Node only.",
    systemPrompt:
      "Answer the conversion. You can call the convert_units tool. When you are done, reply without a tool call: you may reason inside <think>…</think>, then give only the number inside <answer>…</answer>, without units.",
    parser: answerParser,
    dataset: proceduralDataset((rng) => unitsTask(rng)),
    maxTurns: 4,
    runtimes: ["node"],
    mcpServers: [server],
    toolTimeoutMs: 5_000,
    rubric: defineRubric(
      [
        {
          name: "correct",
          weight: 1,
          description: "1 when the answer is within a relative 1e-4 of the reference.",
          fn: ({ completion, answer, parser }) => Number(answer !== null && closeEnough(parser.parseAnswer(completion), answer)),
        },
        {
          name: "format",
          weight: 0.1,
          description: "The final message is <answer>…</answer> with optional <think>, nothing outside the tags.",
          fn: ({ completion, parser }) => {
            const last = assistant(completion).at(-1);
            return last ? parser.formatReward(contentText(last.content)) : 0;
          },
        },
      ],
      ({ completion }) => ({
        tool_calls: assistant(completion).flatMap((m) => m.tool_calls ?? []).length,
        tool_errors: completion.filter((m) => m.role === "tool" && contentText(m.content).startsWith("Error:")).length,
      }),
    ),
  });
}

/** The environment as the Worker declares it (runtimes ["node"]): unavailable there, never started. */
export const mcpUnitsDeclaration = createMcpUnitsEnv({
  name: "units",
  connect: () => Promise.reject(new Error("mcp-units runs on the Node build only")),
});
