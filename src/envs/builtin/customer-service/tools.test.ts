import { describe, expect, it } from "vitest";
import { call } from "../../../../test/support/customer-service-oracle.js";
import { executeToolCalls, toolDefinition, type Tool } from "../../tools.js";
import type { CustomerServiceState } from "./state.js";
import { customerTasks, initialDatabase, taskById } from "./tasks.js";
import { agentTools } from "./tools.js";

/** A fresh episode state of a task, nobody authenticated. */
function stateFor(taskId: string): CustomerServiceState {
  return {
    task_id: taskId,
    seats: { agent: "client", user: "scripted" },
    db: initialDatabase(taskById(taskId)),
    auth_user_id: null,
    to_play: "agent",
    turns: 0,
    user_turns: 0,
    tool_calls: 0,
    writes: 0,
    transferred: false,
    ended: null,
    verdict: null,
  };
}

/** Runs one tool call as the engine does; returns the tool message's text and whether it counted as an error. */
async function run(state: CustomerServiceState, name: string, args: Record<string, unknown>): Promise<{ text: string; error: boolean }> {
  const { messages, errors } = await executeToolCalls(agentTools, call(name, args).tool_calls!, state);
  return { text: String(messages[0]?.content), error: errors === 1 };
}

describe("customer-service tools", () => {
  it("publishes the agent's tools with bounded, typed arguments", () => {
    const defs = agentTools.map((t) => toolDefinition(t as Tool<never>).function);
    expect(defs.map((d) => d.name)).toEqual([
      "find_user_by_email",
      "find_user_by_name_zip",
      "get_user",
      "list_orders",
      "get_order",
      "get_product",
      "cancel_pending_order",
      "modify_address",
      "return_delivered_items",
      "exchange_delivered_items",
      "transfer_to_human",
    ]);
    const cancel = defs.find((d) => d.name === "cancel_pending_order")!.parameters as { properties: Record<string, { enum?: string[]; maxLength?: number }>; additionalProperties: boolean };
    expect(cancel.properties.reason?.enum).toEqual(["no longer needed", "ordered by mistake"]);
    expect(cancel.properties.order_id?.maxLength).toBe(32);
    expect(cancel.additionalProperties).toBe(false);
  });

  it("authenticate the user first: reads and writes before a lookup are refused", async () => {
    const state = stateFor("cancel-by-mistake");
    for (const [name, args] of [
      ["get_order", { order_id: "#W2001" }],
      ["get_user", { user_id: "noah_kim_1001" }],
      ["list_orders", { user_id: "noah_kim_1001" }],
      ["cancel_pending_order", { order_id: "#W2001", reason: "ordered by mistake" }],
    ] as const) {
      expect(await run(state, name, args)).toEqual({ text: expect.stringMatching(/^Error: the user is not authenticated/), error: true });
    }
    expect(await run(state, "find_user_by_email", { email: "nobody@example.com" })).toEqual({ text: 'Error: no user with email "nobody@example.com"', error: true });
    expect(state.auth_user_id).toBeNull();
    expect(await run(state, "find_user_by_email", { email: "Noah.Kim@example.com " })).toEqual({ text: "noah_kim_1001", error: false });
    expect(state.auth_user_id).toBe("noah_kim_1001");
    expect(JSON.parse((await run(state, "list_orders", { user_id: "noah_kim_1001" })).text)).toEqual([
      { order_id: "#W2001", status: "pending" },
      { order_id: "#W2002", status: "delivered" },
    ]);
    expect(JSON.parse((await run(state, "get_order", { order_id: "W2001" })).text)).toMatchObject({ order_id: "#W2001", status: "pending" });
    expect(state.db).toEqual(initialDatabase(taskById("cancel-by-mistake")));
  });

  it("finds a user by name and zip, and serves that user only", async () => {
    const state = stateFor("partners-order");
    expect((await run(state, "find_user_by_name_zip", { first_name: "lucas", last_name: "MEYER", zip: "53703" })).text).toBe("lucas_meyer_9009");
    // Emma lives at the same address, but this conversation is Lucas's.
    expect(await run(state, "find_user_by_email", { email: "emma.meyer@example.com" })).toEqual({
      text: "Error: this conversation is already authenticated as lucas_meyer_9009; you may only help that user",
      error: true,
    });
    expect((await run(state, "get_order", { order_id: "#W9002" })).text).toBe("Error: no order #W9002 for user lucas_meyer_9009");
    expect((await run(state, "get_user", { user_id: "emma_meyer_9010" })).text).toBe("Error: user emma_meyer_9010 is not the authenticated user (lucas_meyer_9009)");
    expect((await run(state, "return_delivered_items", { order_id: "#W9002", item_ids: ["I3001"] })).error).toBe(true);
    expect(state.auth_user_id).toBe("lucas_meyer_9009");
    expect(state.writes).toBe(0);
  });

  it("cancel only pending orders, with one of the two reasons", async () => {
    const state = stateFor("cancel-by-mistake");
    await run(state, "find_user_by_email", { email: "noah.kim@example.com" });
    expect(await run(state, "cancel_pending_order", { order_id: "#W2002", reason: "no longer needed" })).toEqual({
      text: "Error: order #W2002 is delivered; only pending orders can be cancelled",
      error: true,
    });
    expect((await run(state, "cancel_pending_order", { order_id: "#W2001", reason: "too expensive" })).text).toMatch(/^Error: invalid arguments: reason: /);
    const done = await run(state, "cancel_pending_order", { order_id: "#W2001", reason: "ordered by mistake" });
    expect(JSON.parse(done.text)).toMatchObject({ order_id: "#W2001", status: "cancelled", cancel_reason: "ordered by mistake" });
    expect(state.db.orders["#W2001"]).toMatchObject({ status: "cancelled", cancel_reason: "ordered by mistake" });
    expect(state.writes).toBe(1);
    expect((await run(state, "cancel_pending_order", { order_id: "#W2001", reason: "ordered by mistake" })).text).toBe("Error: order #W2001 is cancelled; only pending orders can be cancelled");
    expect(state.writes).toBe(1);
  });

  it("change the address of a pending order only, with every field given", async () => {
    const address = { address1: "55 Oak Street", address2: "Apt 4", city: "Springfield", state: "IL", country: "USA", zip: "62704" };
    const state = stateFor("change-shipping-address");
    await run(state, "find_user_by_email", { email: "liam.chen@example.com" });
    expect((await run(state, "modify_address", { order_id: "#W4001", address: { ...address, zip: undefined } })).text).toMatch(/^Error: invalid arguments: address\.zip/);
    expect((await run(state, "modify_address", { order_id: "#W4001", address })).error).toBe(false);
    expect(state.db.orders["#W4001"]?.address).toEqual(address);
    expect(state.db.users.liam_chen_3003?.address.city).toBe("Austin");

    const other = stateFor("cancel-by-mistake");
    await run(other, "find_user_by_email", { email: "noah.kim@example.com" });
    expect((await run(other, "modify_address", { order_id: "#W2002", address })).text).toBe("Error: order #W2002 is delivered; only pending orders can be given a new address");
  });

  it("return delivered items of the order, refunding their price", async () => {
    const state = stateFor("return-lamp-refund");
    await run(state, "find_user_by_email", { email: "mia.patel@example.com" });
    expect((await run(state, "return_delivered_items", { order_id: "#W5001", item_ids: ["I9999"] })).text).toBe("Error: order #W5001 has no item I9999; its items: I2002, I3001");
    expect((await run(state, "return_delivered_items", { order_id: "#W5001", item_ids: ["I3001", "I3001"] })).text).toBe("Error: an item id is listed twice");
    expect((await run(state, "return_delivered_items", { order_id: "#W5001", item_ids: [] })).error).toBe(true);
    expect(JSON.parse((await run(state, "return_delivered_items", { order_id: "#W5001", item_ids: ["I3001", "I2002"] })).text)).toMatchObject({
      status: "return requested",
      return_items: ["I2002", "I3001"],
      refund_amount: 57.9,
    });
    expect((await run(state, "return_delivered_items", { order_id: "#W5001", item_ids: ["I3001"] })).text).toBe("Error: order #W5001 is return requested; only delivered orders can be returned");
  });

  it("exchange for available variants of the same product, with the price difference", async () => {
    const state = stateFor("exchange-unavailable-variant");
    await run(state, "find_user_by_email", { email: "grace.kim@example.com" });
    const exchange = (items: string[], next: string[]) => run(state, "exchange_delivered_items", { order_id: "#W1101", item_ids: items, new_item_ids: next });
    expect((await exchange(["I1001"], ["I1004"])).text).toBe("Error: variant I1004 of T-Shirt is not available");
    expect((await exchange(["I1001"], ["I2002"])).text).toMatch(/^Error: I2002 is not a variant of T-Shirt \(product P100\)/);
    expect((await exchange(["I1001"], ["I1001"])).text).toBe("Error: I1001 is the item being exchanged; choose a different variant");
    expect((await exchange(["I1001", "I5001"], ["I1003"])).text).toMatch(/^Error: item_ids and new_item_ids must have the same length/);
    expect(state.writes).toBe(0);
    expect(JSON.parse((await exchange(["I5001", "I1001"], ["I5002", "I1003"])).text)).toMatchObject({
      status: "exchange requested",
      exchange_items: ["I1001", "I5001"],
      exchange_new_items: ["I1003", "I5002"],
      price_difference: 12.46,
    });
    expect(JSON.parse((await run(state, "get_product", { product_id: "P100" })).text).variants.I1004).toMatchObject({ available: false });
  });

  it("transfer to a human, and answer every mistake as data the model can read", async () => {
    const state = stateFor("damaged-wants-human");
    expect((await run(state, "transfer_to_human", { summary: "torn strap" })).text).toBe("Transfer successful.");
    expect(state.transferred).toBe(true);
    expect((await run(state, "get_product", { product_id: "P999" })).text).toMatch(/^Error: no product P999/);
    expect((await run(state, "no_such_tool", {})).text).toMatch(/^Error: unknown tool "no_such_tool"/);
    expect((await run(state, "get_order", { order_id: "#W7001", extra: 1 })).text).toMatch(/^Error: invalid arguments/);
    expect((await run(state, "find_user_by_email", { email: "x".repeat(500) })).text).toMatch(/^Error: invalid arguments: email/);
  });

  it("every task's database is valid, and its users and orders agree", () => {
    for (const task of customerTasks) {
      const db = initialDatabase(task);
      for (const user of Object.values(db.users)) for (const id of user.orders) expect(db.orders[id]?.user_id, `${task.id}: ${id}`).toBe(user.user_id);
      for (const order of Object.values(db.orders)) {
        expect(db.users[order.user_id]?.orders, `${task.id}: ${order.order_id}`).toContain(order.order_id);
        for (const item of order.items) expect(db.products[item.product_id]?.variants[item.item_id]?.price, `${task.id}: ${item.item_id}`).toBe(item.price);
      }
    }
  });
});
