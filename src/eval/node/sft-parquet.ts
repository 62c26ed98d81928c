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

/** SFT rows as a Parquet file (snappy-compressed), through hyparquet-writer: pure JS, no native code. */
export function sftParquet(rows: readonly SftRow[]): Uint8Array {
  const messages = rows.map((r) =>
    r.messages.map((m) => ({ role: m.role, content: m.content, tool_calls: m.tool_calls ?? null, tool_call_id: m.tool_call_id ?? null })),
  );
  const buffer = parquetWriteBuffer({
    columnData: [{ name: "messages", data: messages }],
    schema: SCHEMA as unknown as Parameters<typeof parquetWriteBuffer>[0]["schema"],
    createdBy: "edgegym export-sft",
  });
  return new Uint8Array(buffer);
}
