import { z } from "zod";
import { rowsDataset } from "../../dataset.js";
import type { Dataset, TaskRow } from "../../types.js";
import * as ops from "./operations.js";
import taskFile from "./tasks.json" with { type: "json" };
import { CancelArgs, ExchangeArgs, ModifyAddressArgs, ReturnArgs } from "./tools.js";
import { canonicalJson, Database, Order, Product, User } from "./world.js";

/**
 * The tasks: each a customer with a goal, the store's database as it stands when they
 * write in, and the writes that serve them. The expected final database is not written by
 * hand: like tau-bench (its `calculate_reward` replays `task.actions` on fresh data), it is
 * the initial one with the task's actions replayed through the same operations the agent's
 * tools run, so a tool change cannot leave the expected state behind.
 */

/** A write the agent is expected to make, as a tool call would make it. */
export const ExpectedAction = z.discriminatedUnion("name", [
  z.strictObject({ name: z.literal("cancel_pending_order"), arguments: CancelArgs }),
  z.strictObject({ name: z.literal("modify_address"), arguments: ModifyAddressArgs }),
  z.strictObject({ name: z.literal("return_delivered_items"), arguments: ReturnArgs }),
  z.strictObject({ name: z.literal("exchange_delivered_items"), arguments: ExchangeArgs }),
]);
export type ExpectedAction = z.infer<typeof ExpectedAction>;

const Phrase = z.string().min(1).max(200);
const Utterance = z.string().min(1).max(1000);

/**
 * How the scripted user plays the task (scripted-user.ts): what it says first, what it
 * answers when the agent's message contains one of a rule's phrases, when it is done.
 */
export const UserScript = z.strictObject({
  opening: Utterance,
  /** Checked in order against the agent's latest message (case-insensitive substrings); the first match is said. */
  replies: z
    .array(
      z.strictObject({
        when: z.array(Phrase).min(1),
        say: Utterance,
        /** Only while exactly this many writes were made (a two-part request answers "which order?" differently after the first). */
        writes: z.number().int().nonnegative().optional(),
      }),
    )
    .max(20),
  /** Phrases that end the conversation when the agent says one (a refusal the user accepts). */
  stop_when: z.array(Phrase).max(20).optional(),
  /** The user's last words, before the verdict and the stop token. */
  closing: Utterance,
  /** What makes the scripted user say `VERDICT: resolved` (tasks with ask_verdict). */
  verdict: z
    .strictObject({
      /** Each must appear in something the agent told the user (case-insensitive, commas ignored, as tau-bench's `outputs`). */
      said: z.array(Phrase).max(10).optional(),
      /** The agent must (or must not) have transferred the user to a human. */
      transferred: z.boolean().optional(),
    })
    .optional(),
});
export type UserScript = z.infer<typeof UserScript>;

export const CustomerTask = z.strictObject({
  id: z.string().regex(/^[a-z0-9-]{1,64}$/),
  split: z.enum(["train", "eval"]),
  /** The user's hidden instructions: persona, goal and what they know. Shown to the user seat's model only. */
  instructions: z.string().min(1).max(4000),
  /** The user's verdict counts toward the reward (rubric.ts). */
  ask_verdict: z.boolean().optional(),
  users: z.record(z.string(), User),
  orders: z.record(z.string(), Order),
  actions: z.array(ExpectedAction).max(10),
  script: UserScript,
});
export type CustomerTask = z.infer<typeof CustomerTask>;

const TaskFile = z.strictObject({ products: z.record(z.string(), Product), tasks: z.array(CustomerTask).min(1) });

/** The database a task starts from: the store's catalogue and the task's own users and orders. */
export function initialDatabase(task: CustomerTask, products: Record<string, Product> = catalogue): Database {
  return Database.parse(structuredClone({ users: task.users, orders: task.orders, products }));
}

/** Applies one expected action with the conversation authenticated as the order's owner. */
export function applyAction(db: Database, action: ExpectedAction): void {
  const owner = db.orders[action.arguments.order_id]?.user_id ?? null;
  const session: ops.Session = { db, auth_user_id: owner };
  switch (action.name) {
    case "cancel_pending_order":
      ops.cancelPendingOrder(session, action.arguments.order_id, action.arguments.reason);
      return;
    case "modify_address":
      ops.modifyOrderAddress(session, action.arguments.order_id, action.arguments.address);
      return;
    case "return_delivered_items":
      ops.returnDeliveredItems(session, action.arguments.order_id, action.arguments.item_ids);
      return;
    case "exchange_delivered_items":
      ops.exchangeDeliveredItems(session, action.arguments.order_id, action.arguments.item_ids, action.arguments.new_item_ids);
      return;
  }
}

/** The database the task's actions leave behind: what a right agent ends with. Throws when an action is refused (a broken task). */
export function expectedDatabase(task: CustomerTask, products: Record<string, Product> = catalogue): Database {
  const db = initialDatabase(task, products);
  for (const [i, action] of task.actions.entries()) {
    try {
      applyAction(db, action);
    } catch (err) {
      throw new Error(`customer-service task ${task.id}: expected action ${i} (${action.name}) fails: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
    }
  }
  return db;
}

/** 64-bit FNV-1a of a text, as 16 hex digits: a synchronous fingerprint, not a security hash. */
function fnv1a64(text: string): string {
  let hash = 0xcbf29ce484222325n;
  for (let i = 0; i < text.length; i++) {
    hash ^= BigInt(text.charCodeAt(i));
    hash = (hash * 0x100000001b3n) & 0xffffffffffffffffn;
  }
  return hash.toString(16).padStart(16, "0");
}

const parsed = TaskFile.parse(taskFile);
const catalogue = parsed.products;
const tasks = new Map<string, CustomerTask>();
const expected = new Map<string, Database>();
for (const task of parsed.tasks) {
  if (tasks.has(task.id)) throw new Error(`customer-service: task ${task.id} is listed twice`);
  tasks.set(task.id, task);
  expected.set(task.id, expectedDatabase(task));
}

/** Every task, in file order. */
export const customerTasks: readonly CustomerTask[] = parsed.tasks;

/**
 * A task's dataset row. It names the task and carries a fingerprint of all of it (and of
 * the catalogue), so the environment's content hash changes with any edit, but neither
 * the user's hidden instructions nor the expected actions: rows are published by
 * `GET /v1/envs/{id}/examples`, and the agent must learn the user's goal from the user.
 */
export function taskRow(task: CustomerTask): TaskRow {
  return { prompt: [], answer: null, info: { task_id: task.id, fingerprint: fnv1a64(canonicalJson({ task, products: catalogue })) } };
}

export const customerServiceDataset: Dataset = rowsDataset({
  train: customerTasks.filter((t) => t.split === "train").map(taskRow),
  eval: customerTasks.filter((t) => t.split === "eval").map(taskRow),
});

/** The task a row (or a state's task_id) names. */
export function taskById(id: unknown): CustomerTask {
  const task = typeof id === "string" ? tasks.get(id) : undefined;
  if (!task) throw new Error(`customer-service has no task ${JSON.stringify(id)}`);
  return task;
}

export function taskOf(row: TaskRow): CustomerTask {
  return taskById(row.info?.task_id);
}

/** The expected final database of a task (computed once, at load). */
export function expectedDatabaseOf(task: CustomerTask): Database {
  return expected.get(task.id) ?? expectedDatabase(task);
}
