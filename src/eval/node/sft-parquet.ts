import { parquetWriteBuffer } from "hyparquet-writer";
import type { SftRow } from "../sft.js";

const text = (name: string) => ({ name, type: "BYTE_ARRAY", converted_type: "UTF8", repetition_type: "OPTIONAL" }) as const;

/**
 * The `messages` column as Arrow/Hugging Face datasets read it:
 * list<struct<role, content, tool_calls: list<struct<id, type, function: struct<name, arguments>>>, tool_call_id>>,
 * in the standard three-level parquet LIST layout (`messages.list.element`), which
 * pyarrow and `datasets` map to Python lists of dicts.
 */
const SCHEMA = [
  { name: "root", num_children: 1 },
  { name: "messages", repetition_type: "OPTIONAL", converted_type: "LIST", num_children: 1 },
  { name: "list", repetition_type: "REPEATED", num_children: 1 },
  { name: "element", repetition_type: "OPTIONAL", num_children: 4 },
  text("role"),
  text("content"),
  { name: "tool_calls", repetition_type: "OPTIONAL", converted_type: "LIST", num_children: 1 },
  { name: "list", repetition_type: "REPEATED", num_children: 1 },
  { name: "element", repetition_type: "OPTIONAL", num_children: 3 },
  text("id"),
  text("type"),
  { name: "function", repetition_type: "OPTIONAL", num_children: 2 },
  text("name"),
  text("arguments"),
  text("tool_call_id"),
] as const;

/**
 * SFT rows as a Parquet file (snappy-compressed), through hyparquet-writer: pure JS, no native code.
 * Rows that carry the environment's tools (`edgegym generate` on a tool environment) add a
 * `tools` column holding each row's tool list as JSON text: JSON Schemas of arbitrary shape
 * have no fixed Parquet struct, and `json.loads` gives back exactly what the JSONL form holds.
 */
export function sftParquet(rows: readonly (SftRow & { tools?: readonly unknown[] })[]): Uint8Array {
  const messages = rows.map((r) =>
    r.messages.map((m) => ({ role: m.role, content: m.content, tool_calls: m.tool_calls ?? null, tool_call_id: m.tool_call_id ?? null })),
  );
  const withTools = rows.some((r) => r.tools !== undefined);
  const schema = withTools ? [{ ...SCHEMA[0], num_children: 2 }, ...SCHEMA.slice(1), text("tools")] : SCHEMA;
  const columnData: { name: string; data: unknown[] }[] = [{ name: "messages", data: messages }];
  if (withTools) columnData.push({ name: "tools", data: rows.map((r) => (r.tools === undefined ? null : JSON.stringify(r.tools))) });
  const buffer = parquetWriteBuffer({
    columnData: columnData as Parameters<typeof parquetWriteBuffer>[0]["columnData"],
    schema: schema as unknown as Parameters<typeof parquetWriteBuffer>[0]["schema"],
    createdBy: "edgegym export-sft",
  });
  return new Uint8Array(buffer);
}
