import { readFile } from "node:fs/promises";
import { fetchReader, type DatasetReader } from "./load-dataset.js";

/**
 * Node's dataset reader: URLs through fetch, anything else as a file path (relative to the
 * working directory). Node-only: never imported by the Worker build.
 *
 * @example await loadDataset({ source: "./data/train.jsonl", read: readSource })
 */
export const readSource: DatasetReader = async (source) => {
  if (/^(https?|data):/i.test(source)) return fetchReader(source);
  const path = source.startsWith("file://") ? new URL(source) : source;
  return new Uint8Array(await readFile(path));
};
