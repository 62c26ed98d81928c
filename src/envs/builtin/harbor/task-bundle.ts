/**
 * Harbor tasks as one JSON document, for a runtime that reads no files: the Worker. The
 * build (scripts/worker-harbor.ts) loads task directories as the Node server does
 * (task-dir.node.ts: bounded, no symlinks), and writes what a step and the verifier need —
 * config, tests/ and solution/ bytes, hashes — plus which container class runs each task.
 * The Worker parses it back into the same `HarborTaskDir` the Node server serves, so both
 * run one environment (env.ts) on the same tasks.
 */
import { z } from "zod";
import type { ContentHash } from "../../content-hash.js";
import type { ResolvedTaskConfig } from "./task-config.js";
import type { HarborTaskDir, TaskFile } from "./task-dir.node.js";

export const TASK_BUNDLE_VERSION = 1;

const Hash = z.string().regex(/^sha256:[0-9a-f]{64}$/) as unknown as z.ZodType<ContentHash>;
const BundledFile = z.object({ path: z.string().min(1).max(4096), mode: z.number().int().min(0).max(0o7777), data_b64: z.string() }).strict();

const BundledTask = z
  .object({
    name: z.string().min(1),
    /** The directory it was loaded from, for messages only (the Worker reads no files). */
    dir: z.string(),
    /** task.toml, resolved (task-config.ts); trusted as the build wrote it. */
    config: z.record(z.string(), z.unknown()),
    environmentHash: Hash.nullable(),
    tests: z.array(BundledFile),
    testsHash: Hash,
    solution: z.array(BundledFile).nullable(),
    solutionHash: Hash.nullable(),
    /** The Durable Object binding of the container class whose image is this task's. */
    binding: z.string().regex(/^[A-Z][A-Z0-9_]*$/),
  })
  .strict();

export const TaskBundle = z
  .object({
    version: z.literal(TASK_BUNDLE_VERSION),
    tasks: z.array(BundledTask).min(1),
    /** Per container binding: the image's USER (execs run as it unless they name a user), null for root. */
    boxes: z.record(z.string(), z.object({ defaultUser: z.string().nullable() }).strict()),
  })
  .strict();
export type TaskBundle = z.infer<typeof TaskBundle>;

function toBase64(bytes: Uint8Array): string {
  let text = "";
  for (let i = 0; i < bytes.length; i += 0x8000) text += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(text);
}

function fromBase64(text: string): Uint8Array {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

const packFiles = (files: readonly TaskFile[]) => files.map((f) => ({ path: f.relativePath, mode: f.mode, data_b64: toBase64(f.bytes) }));
const unpackFiles = (files: readonly z.infer<typeof BundledFile>[]): TaskFile[] => files.map((f) => ({ relativePath: f.path, mode: f.mode, bytes: fromBase64(f.data_b64) }));

/** The bundle of loaded tasks; `bindingOf` names each task's container class, `defaultUsers` each class's image USER. */
export function bundleTasks(tasks: readonly HarborTaskDir[], bindingOf: (task: HarborTaskDir) => string, defaultUsers: Readonly<Record<string, string | null>>): TaskBundle {
  return {
    version: TASK_BUNDLE_VERSION,
    tasks: tasks.map((task) => ({
      name: task.name,
      dir: task.dir,
      config: task.config as unknown as Record<string, unknown>,
      environmentHash: task.environmentHash,
      tests: packFiles(task.tests),
      testsHash: task.testsHash,
      solution: task.solution ? packFiles(task.solution) : null,
      solutionHash: task.solutionHash,
      binding: bindingOf(task),
    })),
    boxes: Object.fromEntries(Object.entries(defaultUsers).map(([binding, user]) => [binding, { defaultUser: user }])),
  };
}

/** The tasks of a bundle, each with its container binding; a bundle that does not parse is refused whole. */
export function tasksFromBundle(raw: unknown): { tasks: HarborTaskDir[]; bindings: Map<string, string>; defaultUsers: Record<string, string | null> } {
  const bundle = TaskBundle.parse(raw);
  const bindings = new Map<string, string>();
  const tasks = bundle.tasks.map((t): HarborTaskDir => {
    if (!bundle.boxes[t.binding]) throw new Error(`harbor bundle: task ${t.name} names the container binding ${t.binding}, which the bundle does not declare`);
    bindings.set(t.name, t.binding);
    return {
      dir: t.dir,
      name: t.name,
      config: t.config as unknown as ResolvedTaskConfig,
      // The image is the binding's, built by wrangler: nothing to build here.
      environmentDir: null,
      environmentHash: t.environmentHash,
      tests: unpackFiles(t.tests),
      testsHash: t.testsHash,
      solution: t.solution ? unpackFiles(t.solution) : null,
      solutionHash: t.solutionHash,
      warnings: [],
    };
  });
  return { tasks, bindings, defaultUsers: Object.fromEntries(Object.entries(bundle.boxes).map(([b, v]) => [b, v.defaultUser])) };
}
