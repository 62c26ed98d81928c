import { z } from "zod";
import { defineTool, type Tool } from "../../tools.js";
import * as ops from "./operations.js";
import type { CustomerServiceState } from "./state.js";
import { Address, CANCEL_REASONS, type Order } from "./world.js";

/**
 * The agent's tools, over the episode's own database (`state.db`). Arguments are bounded by
 * their schemas; a refusal (not authenticated, not pending, unknown item) is thrown as a
 * RetailError, which the engine hands back to the model as an `Error: …` tool message:
 * the episode goes on and the model can correct itself.
 */

const TIMEOUT_MS = 1_000;
const OrderId = z.string().min(1).max(32).describe('The order id, e.g. "#W2001".');
const UserId = z.string().min(1).max(64).describe("The user id a lookup returned.");
const ItemIds = z.array(z.string().min(1).max(32)).min(1).max(20);

const json = (value: unknown): string => JSON.stringify(value);

/** defineTool with the state type fixed, so each tool's arguments keep their parsed types. */
const retailTool = <Params extends z.ZodObject>(tool: Tool<CustomerServiceState, Params>): Tool<CustomerServiceState> => defineTool(tool);

/** A write that succeeded, counted for the episode's metrics. */
function wrote(state: CustomerServiceState, order: Order): string {
  state.writes++;
  return json(order);
}

export const findUserByEmail = retailTool({
  name: "find_user_by_email",
  description: "Finds the user by email and authenticates the conversation as that user. Returns the user id.",
  parameters: z.strictObject({ email: z.string().min(3).max(200).describe("The email the user gave.") }),
  timeoutMs: TIMEOUT_MS,
  run: ({ email }, { state }) => ops.findUserByEmail(state, email),
});

export const findUserByNameZip = retailTool({
  name: "find_user_by_name_zip",
  description: "Finds the user by first name, last name and zip code (when they do not know their email) and authenticates the conversation as that user. Returns the user id.",
  parameters: z.strictObject({
    first_name: z.string().min(1).max(100),
    last_name: z.string().min(1).max(100),
    zip: z.string().min(1).max(20),
  }),
  timeoutMs: TIMEOUT_MS,
  run: ({ first_name, last_name, zip }, { state }) => ops.findUserByNameZip(state, first_name, last_name, zip),
});

export const getUser = retailTool({
  name: "get_user",
  description: "The authenticated user's details: name, email, default address and order ids.",
  parameters: z.strictObject({ user_id: UserId }),
  timeoutMs: TIMEOUT_MS,
  run: ({ user_id }, { state }) => json(ops.ownUser(state, user_id)),
});

export const listOrders = retailTool({
  name: "list_orders",
  description: "The authenticated user's orders with their status.",
  parameters: z.strictObject({ user_id: UserId }),
  timeoutMs: TIMEOUT_MS,
  run: ({ user_id }, { state }) => json(ops.listOrders(state, user_id)),
});

export const getOrder = retailTool({
  name: "get_order",
  description: "One of the authenticated user's orders: status, items (item id, product id, options, price), shipping address, payment.",
  parameters: z.strictObject({ order_id: OrderId }),
  timeoutMs: TIMEOUT_MS,
  run: ({ order_id }, { state }) => json(ops.ownOrder(state, order_id)),
});

export const getProduct = retailTool({
  name: "get_product",
  description: "A product's variants (item id, options, price, availability), e.g. to find what an item can be exchanged for.",
  parameters: z.strictObject({ product_id: z.string().min(1).max(32) }),
  timeoutMs: TIMEOUT_MS,
  run: ({ product_id }, { state }) => json(ops.getProduct(state, product_id)),
});

/** The write tools' arguments, shared with the tasks' expected actions (tasks.ts). */
export const CancelArgs = z.strictObject({ order_id: OrderId, reason: z.enum(CANCEL_REASONS).describe("Why the user cancels.") });
export const ModifyAddressArgs = z.strictObject({ order_id: OrderId, address: Address.describe("The new address; address2 may be empty.") });
export const ReturnArgs = z.strictObject({ order_id: OrderId, item_ids: ItemIds.describe("The item ids to return, from the order.") });
export const ExchangeArgs = z.strictObject({ order_id: OrderId, item_ids: ItemIds, new_item_ids: ItemIds });

export const cancelPendingOrder = retailTool({
  name: "cancel_pending_order",
  description: "Cancels a pending order of the authenticated user. Only pending orders can be cancelled. Ask the user to confirm first.",
  parameters: CancelArgs,
  timeoutMs: TIMEOUT_MS,
  run: ({ order_id, reason }, { state }) => wrote(state, ops.cancelPendingOrder(state, order_id, reason)),
});

export const modifyAddress = retailTool({
  name: "modify_address",
  description: "Changes the shipping address of a pending order of the authenticated user. Ask the user to confirm first.",
  parameters: ModifyAddressArgs,
  timeoutMs: TIMEOUT_MS,
  run: ({ order_id, address }, { state }) => wrote(state, ops.modifyOrderAddress(state, order_id, address)),
});

export const returnDeliveredItems = retailTool({
  name: "return_delivered_items",
  description: "Requests the return of some items of a delivered order; the refund goes to the order's payment method. Once per order. Ask the user to confirm first.",
  parameters: ReturnArgs,
  timeoutMs: TIMEOUT_MS,
  run: ({ order_id, item_ids }, { state }) => wrote(state, ops.returnDeliveredItems(state, order_id, item_ids)),
});

export const exchangeDeliveredItems = retailTool({
  name: "exchange_delivered_items",
  description:
    "Requests the exchange of some items of a delivered order for other available variants of the same products (new_item_ids[i] replaces item_ids[i]); the price difference is settled with the order's payment method. Once per order. Ask the user to confirm first.",
  parameters: ExchangeArgs,
  timeoutMs: TIMEOUT_MS,
  run: ({ order_id, item_ids, new_item_ids }, { state }) => wrote(state, ops.exchangeDeliveredItems(state, order_id, item_ids, new_item_ids)),
});

export const transferToHuman = retailTool({
  name: "transfer_to_human",
  description: "Transfers the user to a human agent, for a request these tools and the policy cannot serve. The conversation ends after the user's reply.",
  parameters: z.strictObject({ summary: z.string().min(1).max(1000).describe("The user's issue, for the human agent.") }),
  timeoutMs: TIMEOUT_MS,
  run: (_args, { state }) => {
    state.transferred = true;
    return "Transfer successful.";
  },
});

/** Every tool the agent seat has, in the order its prompt lists them. */
export const agentTools: Tool<CustomerServiceState>[] = [
  findUserByEmail,
  findUserByNameZip,
  getUser,
  listOrders,
  getOrder,
  getProduct,
  cancelPendingOrder,
  modifyAddress,
  returnDeliveredItems,
  exchangeDeliveredItems,
  transferToHuman,
];
