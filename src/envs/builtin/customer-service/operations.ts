import { sumPrices, type Address, type CancelReason, type Database, type Order, type OrderStatus, type Product, type User } from "./world.js";

/**
 * What the agent's tools do to a task's database, as plain functions over a session (the
 * database and who the conversation is authenticated as). The tools wrap them; replaying a
 * task's expected actions uses them too, so the expected database is made by the very code
 * the agent runs. A refusal is a `RetailError`: the tool turns it into an `Error: …` tool
 * message for the model, and the episode goes on.
 */
export interface Session {
  db: Database;
  /** The user this conversation is authenticated as; null until a lookup succeeds. */
  auth_user_id: string | null;
}

export class RetailError extends Error {
  override name = "RetailError";
}

const NOT_AUTHENTICATED = "the user is not authenticated: find them first with find_user_by_email or find_user_by_name_zip";

function authenticate(session: Session, user: User): string {
  if (session.auth_user_id !== null && session.auth_user_id !== user.user_id) {
    throw new RetailError(`this conversation is already authenticated as ${session.auth_user_id}; you may only help that user`);
  }
  session.auth_user_id = user.user_id;
  return user.user_id;
}

export function findUserByEmail(session: Session, email: string): string {
  const wanted = email.trim().toLowerCase();
  const user = Object.values(session.db.users).find((u) => u.email.toLowerCase() === wanted);
  if (!user) throw new RetailError(`no user with email "${email}"`);
  return authenticate(session, user);
}

export function findUserByNameZip(session: Session, first: string, last: string, zip: string): string {
  const norm = (s: string) => s.trim().toLowerCase();
  const user = Object.values(session.db.users).find((u) => norm(u.name.first) === norm(first) && norm(u.name.last) === norm(last) && norm(u.address.zip) === norm(zip));
  if (!user) throw new RetailError(`no user named ${first} ${last} with zip code ${zip}`);
  return authenticate(session, user);
}

/** The authenticated user, who must be `userId`. */
export function ownUser(session: Session, userId: string): User {
  if (session.auth_user_id === null) throw new RetailError(NOT_AUTHENTICATED);
  if (userId !== session.auth_user_id) throw new RetailError(`user ${userId} is not the authenticated user (${session.auth_user_id})`);
  const user = session.db.users[userId];
  if (!user) throw new RetailError(`no user ${userId}`);
  return user;
}

/** An order of the authenticated user. Another user's order reads as not found to the agent, as it would to a store's support desk. */
export function ownOrder(session: Session, orderId: string): Order {
  if (session.auth_user_id === null) throw new RetailError(NOT_AUTHENTICATED);
  const id = orderId.trim().startsWith("#") ? orderId.trim() : `#${orderId.trim()}`;
  const order = session.db.orders[id];
  if (!order || order.user_id !== session.auth_user_id) throw new RetailError(`no order ${id} for user ${session.auth_user_id}`);
  return order;
}

export function getProduct(session: Session, productId: string): Product {
  const product = session.db.products[productId];
  if (!product) throw new RetailError(`no product ${productId}; product ids are listed with the items of an order`);
  return product;
}

export function listOrders(session: Session, userId: string): { order_id: string; status: string }[] {
  const user = ownUser(session, userId);
  return user.orders.map((id) => ({ order_id: id, status: session.db.orders[id]?.status ?? "unknown" }));
}

function requireStatus(order: Order, status: OrderStatus, action: string): void {
  if (order.status !== status) throw new RetailError(`order ${order.order_id} is ${order.status}; only ${status} orders can be ${action}`);
}

export function cancelPendingOrder(session: Session, orderId: string, reason: CancelReason): Order {
  const order = ownOrder(session, orderId);
  requireStatus(order, "pending", "cancelled");
  order.status = "cancelled";
  order.cancel_reason = reason;
  return order;
}

export function modifyOrderAddress(session: Session, orderId: string, address: Address): Order {
  const order = ownOrder(session, orderId);
  requireStatus(order, "pending", "given a new address");
  order.address = { ...address };
  return order;
}

/** The order's items named by `itemIds` (each once, each in the order). */
function pickItems(order: Order, itemIds: readonly string[]): Order["items"] {
  if (new Set(itemIds).size !== itemIds.length) throw new RetailError("an item id is listed twice");
  return itemIds.map((id) => {
    const item = order.items.find((i) => i.item_id === id);
    if (!item) throw new RetailError(`order ${order.order_id} has no item ${id}; its items: ${order.items.map((i) => i.item_id).join(", ")}`);
    return item;
  });
}

export function returnDeliveredItems(session: Session, orderId: string, itemIds: readonly string[]): Order {
  const order = ownOrder(session, orderId);
  requireStatus(order, "delivered", "returned");
  const items = pickItems(order, itemIds);
  order.status = "return requested";
  order.return_items = items.map((i) => i.item_id).sort();
  order.refund_amount = sumPrices(items.map((i) => i.price));
  return order;
}

export function exchangeDeliveredItems(session: Session, orderId: string, itemIds: readonly string[], newItemIds: readonly string[]): Order {
  const order = ownOrder(session, orderId);
  requireStatus(order, "delivered", "exchanged");
  if (itemIds.length !== newItemIds.length) throw new RetailError("item_ids and new_item_ids must have the same length (one new item per exchanged item)");
  const items = pickItems(order, itemIds);
  const pairs = items.map((item, i) => {
    const newId = newItemIds[i] as string;
    const product = session.db.products[item.product_id];
    const variant = product?.variants[newId];
    if (!product || !variant) throw new RetailError(`${newId} is not a variant of ${item.name} (product ${item.product_id}); an item can only be exchanged for another variant of the same product`);
    if (newId === item.item_id) throw new RetailError(`${newId} is the item being exchanged; choose a different variant`);
    if (!variant.available) throw new RetailError(`variant ${newId} of ${product.name} is not available`);
    return { old: item, next: variant };
  });
  pairs.sort((a, b) => (a.old.item_id < b.old.item_id ? -1 : a.old.item_id > b.old.item_id ? 1 : 0));
  order.status = "exchange requested";
  order.exchange_items = pairs.map((p) => p.old.item_id);
  order.exchange_new_items = pairs.map((p) => p.next.item_id);
  order.price_difference = sumPrices([...pairs.map((p) => p.next.price), ...pairs.map((p) => -p.old.price)]);
  return order;
}
