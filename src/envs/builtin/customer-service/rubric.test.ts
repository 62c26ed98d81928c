import { describe, expect, it } from "vitest";
import { XmlParser } from "../../parsers/xml-parser.js";
import { scoreRubric, type RewardInputs } from "../../rubric.js";
import { customerServiceRubric } from "./rubric.js";
import type { CustomerServiceState } from "./state.js";
import { applyAction, customerServiceDataset, customerTasks, expectedDatabase, expectedDatabaseOf, initialDatabase, taskById, taskRow } from "./tasks.js";
import { canonicalJson, tablesMatch, type Database } from "./world.js";

function finished(taskId: string, db: Database, over: Partial<CustomerServiceState> = {}): CustomerServiceState {
  return {
    task_id: taskId,
    seats: { agent: "client", user: "scripted" },
    db,
    auth_user_id: null,
    to_play: null,
    turns: 5,
    user_turns: 4,
    tool_calls: 3,
    writes: 1,
    transferred: false,
    ended: "user_stop",
    verdict: null,
    ...over,
  };
}

const inputs = (state: CustomerServiceState | null, seat = "agent"): RewardInputs<CustomerServiceState> => ({
  prompt: [],
  completion: [],
  answer: null,
  info: {},
  state,
  parser: new XmlParser({ fields: ["answer"] }),
  task: taskRow(taskById(state?.task_id ?? "cancel-by-mistake")),
  seat,
});

describe("customer-service database check", () => {
  it("expects each task's actions replayed on its initial database, and no change where it has none", () => {
    for (const task of customerTasks) {
      const initial = initialDatabase(task);
      const expected = expectedDatabaseOf(task);
      expect(tablesMatch(initial, expected), task.id).toBe(task.actions.length === 0);
      const replayed = initialDatabase(task);
      for (const action of task.actions) applyAction(replayed, action);
      expect(tablesMatch(replayed, expected), task.id).toBe(true);
    }
    expect(expectedDatabaseOf(taskById("cancel-by-mistake")).orders["#W2001"]).toMatchObject({ status: "cancelled", cancel_reason: "ordered by mistake" });
  });

  it("refuses a task whose expected action the tools would refuse", () => {
    const task = taskById("cancel-by-mistake");
    const broken = { ...task, actions: [{ name: "cancel_pending_order" as const, arguments: { order_id: "#W2002", reason: "no longer needed" as const } }] };
    expect(() => expectedDatabase(broken)).toThrow("customer-service task cancel-by-mistake: expected action 0 (cancel_pending_order) fails: order #W2002 is delivered; only pending orders can be cancelled");
  });

  it("compares the written tables by content, whatever the key order", () => {
    const task = taskById("change-shipping-address");
    const a = initialDatabase(task);
    const b = JSON.parse(canonicalJson(a)) as Database;
    const order = b.orders["#W4001"]!;
    b.orders["#W4001"] = Object.fromEntries(Object.entries(order).reverse()) as typeof order;
    expect(tablesMatch(a, b)).toBe(true);
    b.orders["#W4001"]!.address.address2 = "Apt 5";
    expect(tablesMatch(a, b)).toBe(false);
    const c = initialDatabase(task);
    c.products.P100!.name = "Tee";
    expect(tablesMatch(a, c)).toBe(true);
  });

  it("keeps hidden instructions and expected actions out of the published rows", async () => {
    for (const split of ["train", "eval"] as const) {
      for (let i = 0; i < customerServiceDataset.size(split)!; i++) {
        const row = await customerServiceDataset.row(split, i);
        const task = taskById(row.info?.task_id);
        expect(task.split).toBe(split);
        expect(row).toEqual({ prompt: [], answer: null, info: { task_id: task.id, fingerprint: expect.stringMatching(/^[0-9a-f]{16}$/) } });
      }
    }
    expect([customerServiceDataset.size("train"), customerServiceDataset.size("eval")]).toEqual([7, 2]);
    const fingerprints = customerTasks.map((t) => taskRow(t).info?.fingerprint);
    expect(new Set(fingerprints).size).toBe(customerTasks.length);
  });
});

describe("customer-service reward", () => {
  it("db_match: 1 for the expected database, 0 for any other, the same for both seats", async () => {
    const task = taskById("cancel-by-mistake");
    for (const seat of ["agent", "user"]) {
      const right = await scoreRubric(customerServiceRubric, inputs(finished(task.id, expectedDatabaseOf(task)), seat));
      expect(right.reward).toBe(1);
      expect(right.components.map((c) => [c.name, c.score])).toEqual([
        ["db_match", 1],
        ["user_verdict", 0],
      ]);
      expect(right.metrics).toEqual({ tool_calls: 3, turns: 5, user_turns: 4, writes: 1, transferred: 0 });
      const untouched = await scoreRubric(customerServiceRubric, inputs(finished(task.id, initialDatabase(task)), seat));
      expect(untouched.reward).toBe(0);
    }
  });

  it("user_verdict: counts only where the task asks, and only against a right database", async () => {
    const task = taskById("return-lamp-refund");
    const right = expectedDatabaseOf(task);
    const score = async (db: Database, verdict: CustomerServiceState["verdict"]) => {
      const s = await scoreRubric(customerServiceRubric, inputs(finished(task.id, db, { verdict })));
      return [s.reward, ...s.components.map((c) => c.score)];
    };
    expect(await score(right, "resolved")).toEqual([1, 1, 0]);
    expect(await score(right, "unresolved")).toEqual([0, 1, -1]);
    expect(await score(right, null)).toEqual([0, 1, -1]);
    expect(await score(initialDatabase(task), "resolved")).toEqual([0, 0, 0]);
    expect(await score(initialDatabase(task), "unresolved")).toEqual([0, 0, 0]);
    // A task without ask_verdict ignores what the user said.
    const plain = taskById("cancel-by-mistake");
    const s = await scoreRubric(customerServiceRubric, inputs(finished(plain.id, expectedDatabaseOf(plain), { verdict: "unresolved" })));
    expect(s.reward).toBe(1);
  });

  it("cannot score a bare completion (no database)", async () => {
    const s = await scoreRubric(customerServiceRubric, inputs(null));
    expect(s.reward).toBe(0);
    expect(s.components[0]?.error).toMatch(/scores episodes \(their database\), not bare completions/);
  });
});
