import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { bundleTasks, tasksFromBundle } from "./task-bundle.js";
import { loadHarborTasks } from "./task-dir.node.js";

const FIXTURES = join(import.meta.dirname, "..", "..", "..", "..", "test", "fixtures", "harbor-tasks");

describe("Harbor task bundle (the Worker's tasks)", () => {
  it("gives back the tasks the Node server loads, bytes and modes included, each with its container binding", async () => {
    const { tasks } = await loadHarborTasks(FIXTURES);
    const bundle = JSON.parse(JSON.stringify(bundleTasks(tasks, (t) => (t.name.includes("count") ? "HARBOR_BOX_0" : "HARBOR_BOX_1"), { HARBOR_BOX_0: null, HARBOR_BOX_1: "app" })));
    const back = tasksFromBundle(bundle);
    expect(back.tasks.map((t) => t.name)).toEqual(tasks.map((t) => t.name));
    for (const [i, task] of tasks.entries()) {
      const again = back.tasks[i];
      expect(again?.config).toEqual(task.config);
      expect(again?.tests).toEqual(task.tests);
      expect(again?.solution).toEqual(task.solution);
      expect(again?.testsHash).toBe(task.testsHash);
      expect(again?.environmentDir).toBeNull();
    }
    expect(back.bindings.get(tasks.find((t) => t.name.includes("count"))?.name ?? "")).toBe("HARBOR_BOX_0");
    expect(back.defaultUsers).toEqual({ HARBOR_BOX_0: null, HARBOR_BOX_1: "app" });
  });

  it("refuses a bundle that does not parse, or names a binding it does not declare", async () => {
    const { tasks } = await loadHarborTasks(FIXTURES);
    const bundle = bundleTasks(tasks.slice(0, 1), () => "HARBOR_BOX_0", {});
    expect(() => tasksFromBundle(bundle)).toThrow(/does not declare/);
    expect(() => tasksFromBundle({ version: 2, tasks: [], boxes: {} })).toThrow();
    expect(() => tasksFromBundle({ ...bundle, tasks: [{ ...bundle.tasks[0], binding: "lower-case" }] })).toThrow();
  });
});
