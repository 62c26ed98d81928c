import { describe, expect, it } from "vitest";
import { SessionQueue } from "./session-queue.js";

describe("SessionQueue", () => {
  it("lets one call per session in at a time, in arrival order, and forgets a session once its calls are done", async () => {
    const queue = new SessionQueue();
    const order: string[] = [];
    const first = await queue.enter("a");
    expect(first.waited).toBe(false);
    // Another session is not held up by this one.
    const other = await queue.enter("b");
    expect(other.waited).toBe(false);
    other.leave();
    const second = queue.enter("a").then((slot) => (order.push("second"), slot));
    const third = queue.enter("a").then((slot) => (order.push("third"), slot));
    await new Promise((r) => setTimeout(r, 10));
    expect(order).toEqual([]);
    first.leave();
    const slot2 = await second;
    expect([slot2.waited, order]).toEqual([true, ["second"]]);
    slot2.leave();
    (await third).leave();
    expect(order).toEqual(["second", "third"]);
    await new Promise((r) => setTimeout(r, 0));
    expect(queue.size).toBe(0);
  });
});
