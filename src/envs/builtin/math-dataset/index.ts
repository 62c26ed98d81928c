import { z } from "zod";
import type { Split } from "../../../protocol/index.js";
import { loadDataset, type DatasetReader } from "../../datasets/load-dataset.js";
import type { DataRecord } from "../../datasets/parse-records.js";
import { singleTurnEnv } from "../../define.js";
import { mathRubric } from "../../math/rubric.js";
import { BoxedParser } from "../../parsers/boxed.js";
import type { AnyEnvironment, Dataset, TaskRow } from "../../types.js";

/**
 * The operator's settings for the `math-dataset` environment (config file key
 * `math_dataset`, or `EDGEGYM_MATH_DATASET` as JSON). Every field but `source` is optional.
 */
export const MathDatasetConfig = z
  .object({
    /** A file path (Node) or an http(s) URL; or one per split. */
    source: z.union([z.string().min(1), z.object({ train: z.string().min(1), eval: z.string().min(1).optional() }).strict()]),
    /** Default: from the name's extension (.jsonl, .json, .csv, .parquet), else sniffed. */
    format: z.enum(["jsonl", "json", "csv", "parquet"]).optional(),
    /** Environment id; default `math-dataset`. Several datasets need several ids. */
    id: z.string().regex(/^[a-z0-9][a-z0-9-]{0,63}$/).optional(),
    /** Column of the question; default the first of question, problem, prompt, input, query. */
    prompt_column: z.string().min(1).optional(),
    /** Column of the reference; default the first of answer, final_answer, expected_answer, solution, target. */
    answer_column: z.string().min(1).optional(),
    /** Share of rows drawn (seeded) into eval when the source is one file; default 0. */
    eval_fraction: z.number().min(0).lt(1).optional(),
    seed: z.number().int().optional(),
    shuffle: z.boolean().optional(),
    limit: z.object({ train: z.number().int().positive().optional(), eval: z.number().int().positive().optional() }).strict().optional(),
    /** Decimal places a decimal answer stands for (verifyMath's precision); default 6, or "exact". */
    precision: z.union([z.number().int().min(0).max(15), z.literal("exact")]).optional(),
  })
  .strict();
export type MathDatasetConfig = z.infer<typeof MathDatasetConfig>;

/**
 * `EDGEGYM_MATH_DATASET` read the same way on both runtimes (a Node environment variable,
 * a Worker var): settings as JSON, or just the source's path or URL. Undefined when unset
 * or empty; an error naming the variable when it does not validate.
 *
 * @example mathDatasetConfigFromVar("https://example.org/gsm8k/test.jsonl") // { source: "https://…" }
 */
export function mathDatasetConfigFromVar(raw: string | undefined): MathDatasetConfig | undefined {
  const text = raw?.trim() ?? "";
  if (text === "") return undefined;
  let value: unknown;
  try {
    value = text.startsWith("{") ? JSON.parse(text) : { source: text };
  } catch (err) {
    throw new Error(`EDGEGYM_MATH_DATASET: not valid JSON (${err instanceof Error ? err.message : String(err)})`, { cause: err });
  }
  const parsed = MathDatasetConfig.safeParse(value);
  if (!parsed.success) throw new Error(`EDGEGYM_MATH_DATASET: ${parsed.error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`).join("; ")}`);
  return parsed.data;
}

const PROMPT_COLUMNS = ["question", "problem", "prompt", "input", "query"];
/** GSM8K's `answer` ends in `#### 42`; MATH's `solution` has a `\boxed{}`: verifyMath reads both. */
const ANSWER_COLUMNS = ["answer", "final_answer", "expected_answer", "solution", "target"];

export const MATH_DATASET_SYSTEM_PROMPT =
  "Solve the problem. Reason step by step, then give the final answer in \\boxed{}, e.g. \\boxed{42} or \\boxed{\\frac{1}{2}}.";

const present = (record: DataRecord, names: readonly string[]): string | undefined => names.find((n) => record[n] !== undefined && record[n] !== null && record[n] !== "");
const asText = (value: unknown): string => (typeof value === "string" ? value : JSON.stringify(value));

/**
 * A dataset loaded on first use and kept: Workers may not fetch while a module loads,
 * so the first reset pays for the download. Until then the size is unknown (null), and an
 * index past the end wraps around, so a seeded reset still picks a seeded row.
 */
function loadOnFirstUse(load: () => Promise<Dataset>): Dataset & { ready(): Promise<Dataset> } {
  let loaded: Dataset | null = null;
  let pending: Promise<Dataset> | null = null;
  const ready = (): Promise<Dataset> => {
    pending ??= load().then(
      (dataset) => (loaded = dataset),
      (err: unknown) => {
        pending = null; // a failed download is tried again on the next reset
        throw err;
      },
    );
    return pending;
  };
  return {
    size: (split: Split) => loaded?.size(split) ?? null,
    row: async (split: Split, index: number): Promise<TaskRow> => {
      const dataset = await ready();
      const size = dataset.size(split) ?? 0;
      if (size === 0) throw new Error(`math-dataset has no rows in split "${split}"`);
      return dataset.row(split, index % size);
    },
    ready,
  };
}

/**
 * The `math-dataset` environment over the operator's own data: any JSONL, JSON, CSV or
 * Parquet of question/answer rows (GSM8K's `question`/`answer` and MATH's
 * `problem`/`solution` recognised), by path (Node, with `read`) or URL (both runtimes).
 * The model answers in `\boxed{}`; `correct` is {@link verifyMath} against the row's
 * reference, with the answer extracted from the whole reply as math-verify does.
 *
 * @example
 * const env = createMathDatasetEnv({ source: "https://example.org/gsm8k/test.parquet" });
 * await env.dataset.ready(); // optional: load now rather than on the first reset
 */
export function createMathDatasetEnv(config: MathDatasetConfig, options: { read?: DatasetReader } = {}): AnyEnvironment & { dataset: { ready(): Promise<Dataset> } } {
  const settings = MathDatasetConfig.parse(config);
  const dataset = loadOnFirstUse(() =>
    loadDataset({
      source: settings.source,
      format: settings.format,
      read: options.read,
      evalFraction: settings.eval_fraction,
      seed: settings.seed,
      shuffle: settings.shuffle,
      limit: settings.limit,
      columns: {
        prompt: (record) => asText(record[settings.prompt_column ?? present(record, PROMPT_COLUMNS) ?? "question"] ?? ""),
        answer: (record) => {
          const column = settings.answer_column ?? present(record, ANSWER_COLUMNS);
          return column === undefined || record[column] === undefined || record[column] === null ? null : asText(record[column]);
        },
      },
    }),
  );
  const env = singleTurnEnv({
    id: settings.id ?? "math-dataset",
    version: "1.0.0",
    description: "Math problems from the operator's dataset (JSONL, JSON, CSV or Parquet; GSM8K and MATH fields recognised), answered in \\boxed{} and verified like math-verify.",
    systemPrompt: MATH_DATASET_SYSTEM_PROMPT,
    parser: new BoxedParser(),
    dataset,
    rubric: mathRubric({ answerFrom: "completion", precision: settings.precision ?? 6 }),
  });
  return { ...env, dataset } as AnyEnvironment & { dataset: { ready(): Promise<Dataset> } };
}
