import { z } from "zod";

/**
 * The retail world of one task: a small store's database. Every episode gets its own copy
 * (kept in the episode's state), the agent's tools read and write it, and the reward
 * compares the tables the tools write (users, orders) with the task's expected ones. The
 * shape follows tau-bench's retail domain (sierra-research/tau-bench, tau_bench/envs/retail),
 * cut down to what the tools here need.
 */

export const ORDER_STATUSES = ["pending", "processed", "delivered", "cancelled", "return requested", "exchange requested"] as const;
export type OrderStatus = (typeof ORDER_STATUSES)[number];

/** Why a pending order may be cancelled: the two reasons tau-bench's retail policy accepts. */
export const CANCEL_REASONS = ["no longer needed", "ordered by mistake"] as const;
export type CancelReason = (typeof CANCEL_REASONS)[number];

const Id = z.string().min(1).max(64);
const Text = z.string().max(200);

export const Address = z.strictObject({
  address1: Text.min(1),
  address2: Text,
  city: Text.min(1),
  state: Text.min(1),
  country: Text.min(1),
  zip: Text.min(1),
});
export type Address = z.infer<typeof Address>;

const Price = z.number().nonnegative().multipleOf(0.01);
const Options = z.record(z.string().max(32), z.string().max(64));

export const Variant = z.strictObject({ item_id: Id, options: Options, available: z.boolean(), price: Price });
export type Variant = z.infer<typeof Variant>;

export const Product = z.strictObject({ product_id: Id, name: Text.min(1), variants: z.record(Id, Variant) });
export type Product = z.infer<typeof Product>;

export const OrderItem = z.strictObject({ item_id: Id, product_id: Id, name: Text.min(1), options: Options, price: Price });
export type OrderItem = z.infer<typeof OrderItem>;

export const Order = z.strictObject({
  order_id: Id,
  user_id: Id,
  status: z.enum(ORDER_STATUSES),
  address: Address,
  items: z.array(OrderItem).min(1).max(20),
  /** How it was paid ("credit card ending 4242"): refunds go back there. */
  payment: Text.min(1),
  cancel_reason: z.enum(CANCEL_REASONS).optional(),
  /** A requested return: the item ids (sorted) and what is refunded. */
  return_items: z.array(Id).optional(),
  refund_amount: Price.optional(),
  /** A requested exchange: old item ids and their new variants, pairwise, sorted by old id. */
  exchange_items: z.array(Id).optional(),
  exchange_new_items: z.array(Id).optional(),
  /** New items' total minus old items' total (negative: refunded). */
  price_difference: z.number().multipleOf(0.01).optional(),
});
export type Order = z.infer<typeof Order>;

export const User = z.strictObject({
  user_id: Id,
  name: z.strictObject({ first: Text.min(1), last: Text.min(1) }),
  email: Text.min(3),
  address: Address,
  orders: z.array(Id).max(50),
});
export type User = z.infer<typeof User>;

export const Database = z.strictObject({
  users: z.record(Id, User),
  orders: z.record(Id, Order),
  products: z.record(Id, Product),
});
export type Database = z.infer<typeof Database>;

/** The tables the agent's tools write, and so the ones the reward compares. */
export const WRITTEN_TABLES = ["users", "orders"] as const;

/** JSON with object keys sorted at every level: two values are equal exactly when their texts are. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (v === null || typeof v !== "object" || Array.isArray(v)) return v;
    const entries = Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return Object.fromEntries(entries);
  });
}

/** True when `actual` and `expected` hold the same rows in every table the tools write (tau-bench compares a hash of its data the same way). */
export function tablesMatch(actual: Database, expected: Database): boolean {
  return WRITTEN_TABLES.every((table) => canonicalJson(actual[table]) === canonicalJson(expected[table]));
}

/** Money is kept in dollars with two decimals; sums go through cents so 0.1 + 0.2 stays 0.3. */
export function sumPrices(prices: readonly number[]): number {
  return prices.reduce((cents, p) => cents + Math.round(p * 100), 0) / 100;
}
