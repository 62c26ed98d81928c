import type { AssistantMessage } from "../../src/protocol/index.js";

/**
 * For the tests of customer-service (src/envs/builtin/customer-service): an agent's moves
 * written briefly, and an oracle for every task (the moves of an agent that follows the
 * store's policy, against the scripted user).
 */

let callCounter = 0;

/** An agent message that calls one tool. */
export function call(name: string, args: Record<string, unknown>): AssistantMessage {
  return { role: "assistant", content: null, tool_calls: [{ id: `call_${++callCounter}`, type: "function", function: { name, arguments: JSON.stringify(args) } }] };
}

/** An agent message to the user. */
export function say(content: string): AssistantMessage {
  return { role: "assistant", content };
}

const ask = (email: string) => [say("I can help with that. Could you please give me your email address?"), call("find_user_by_email", { email })];

/** What an agent that follows the policy does in each task, against the scripted user. */
export const ORACLE: Record<string, AssistantMessage[]> = {
  "cancel-by-mistake": [
    ...ask("noah.kim@example.com"),
    say("Thanks, Noah. Which order would you like to cancel?"),
    call("get_order", { order_id: "#W2001" }),
    say("Order #W2001 (blue T-shirt, size M, $19.99) is pending. I will cancel it with the reason 'ordered by mistake'. Do you confirm (yes/no)?"),
    call("cancel_pending_order", { order_id: "#W2001", reason: "ordered by mistake" }),
    say("Your order #W2001 has been cancelled."),
  ],
  "delivered-cannot-cancel": [
    say("I can help. May I have your email address, or your name and zip code?"),
    call("find_user_by_name_zip", { first_name: "Ava", last_name: "Lopez", zip: "10001" }),
    say("Thank you, Ava. Which order is it?"),
    call("get_order", { order_id: "#W3001" }),
    say("I'm sorry: order #W3001 has already been delivered, so it cannot be cancelled. Only pending orders can."),
  ],
  "change-shipping-address": [
    ...ask("liam.chen@example.com"),
    say("Thanks. Which order number is it?"),
    say("Got it. What is the new address?"),
    call("get_order", { order_id: "#W4001" }),
    say("I will change the shipping address of order #W4001 to 55 Oak Street, Apt 4, Springfield, IL 62704, USA. Do you confirm?"),
    call("modify_address", { order_id: "#W4001", address: { address1: "55 Oak Street", address2: "Apt 4", city: "Springfield", state: "IL", country: "USA", zip: "62704" } }),
    say("Done: order #W4001 will ship to 55 Oak Street, Apt 4, Springfield, IL 62704, USA."),
  ],
  "return-lamp-refund": [
    ...ask("mia.patel@example.com"),
    say("Thanks. Which order is the lamp from?"),
    call("get_order", { order_id: "#W5001" }),
    say("Order #W5001 has a water bottle and a desk lamp. Shall I request the return of the desk lamp only (item I3001)? Please confirm."),
    call("return_delivered_items", { order_id: "#W5001", item_ids: ["I3001"] }),
    say("The return of the desk lamp is requested: $39.90 will be refunded to your credit card ending 5150."),
  ],
  "exchange-shoe-size": [
    ...ask("ethan.brooks@example.com"),
    say("Thanks. Which order are the shoes from?"),
    call("get_order", { order_id: "#W6001" }),
    say("Which size would you like instead?"),
    call("get_product", { product_id: "P400" }),
    say("I can exchange your black size 9 running shoes (I4001) for black size 10 (I4002); the price difference is $0.00. Do you confirm?"),
    call("exchange_delivered_items", { order_id: "#W6001", item_ids: ["I4001"], new_item_ids: ["I4002"] }),
    say("Done! The exchange is requested."),
  ],
  "damaged-wants-human": [
    ...ask("sofia.rossi@example.com"),
    say("Thanks, Sofia. Which order was it?"),
    call("get_order", { order_id: "#W7001" }),
    say("I can't offer compensation myself, but I can transfer you to a human agent who can look into it. Please confirm you want that."),
    call("transfer_to_human", { summary: "Backpack from order #W7001 arrived with a torn strap; the customer asks for compensation." }),
  ],
  "exchange-unavailable-variant": [
    ...ask("grace.kim@example.com"),
    say("Thanks. Which order is the T-shirt from?"),
    call("get_order", { order_id: "#W1101" }),
    say("What color and size would you like?"),
    call("get_product", { product_id: "P100" }),
    say("I'm sorry, red in size L is not available. Red in size M is available at $21.99."),
    say("I'll exchange the blue M T-shirt (I1001) for the red M (I1003); the price difference of $2.00 will be charged to your credit card ending 7777. Do you confirm?"),
    call("exchange_delivered_items", { order_id: "#W1101", item_ids: ["I1001"], new_item_ids: ["I1003"] }),
    say("The exchange is requested."),
  ],
  "cancel-and-readdress": [
    ...ask("olivia.novak@example.com"),
    say("Thanks. Which order would you like to cancel first?"),
    call("get_order", { order_id: "#W8001" }),
    say("What is the reason for the cancellation?"),
    say("I'll cancel order #W8001 (red T-shirt) with the reason 'no longer needed'. Do you confirm?"),
    call("cancel_pending_order", { order_id: "#W8001", reason: "no longer needed" }),
    say("Order #W8001 is cancelled. Which order needs the new address?"),
    call("get_order", { order_id: "#W8002" }),
    say("I'll change the shipping address of order #W8002 to 9 Harbor Lane, Seattle, WA 98101, USA. Do you confirm?"),
    call("modify_address", { order_id: "#W8002", address: { address1: "9 Harbor Lane", address2: "", city: "Seattle", state: "WA", country: "USA", zip: "98101" } }),
    say("Done: order #W8002 will ship to 9 Harbor Lane, Seattle, WA 98101, USA."),
  ],
  "partners-order": [
    ...ask("lucas.meyer@example.com"),
    call("get_order", { order_id: "#W9002" }),
    say("I'm sorry, I could not find order #W9002 on your account, so I can't process a return for it."),
  ],
};
