import type { Kysely } from 'kysely';
import type { DB } from '../db/types.js';

export interface CartLine {
  product_id: number;
  quantity: number;
}

export const MAX_LINE_QUANTITY = 99;
export const MAX_CART_LINES = 50;

/** The cart kept in the website session's data (a guest's survives sign-in with the session data). */
export function cartLines(session: Record<string, unknown> | null): CartLine[] {
  const raw = session?.cart;
  if (!Array.isArray(raw)) return [];
  return raw.filter(
    (l): l is CartLine =>
      typeof l === 'object' && l !== null && Number.isInteger((l as CartLine).product_id) && Number.isInteger((l as CartLine).quantity) && (l as CartLine).quantity > 0,
  );
}

/** The cart as the API and the cart page show it: each line with its live product's name. */
export async function cartSummary(db: Kysely<DB>, lines: CartLine[]) {
  const ids = lines.map((l) => l.product_id);
  const products = ids.length
    ? ((await (db as unknown as Kysely<any>)
        .selectFrom('pro_products')
        .select(['pro_product_id', 'pro_name', 'pro_link'])
        .where('pro_product_id', 'in', ids)
        .execute()) as Array<{ pro_product_id: number; pro_name: string; pro_link: string | null }>)
    : [];
  const byId = new Map(products.map((p) => [Number(p.pro_product_id), p]));
  const items = lines
    .filter((l) => byId.has(l.product_id))
    .map((l) => ({ product_id: l.product_id, name: byId.get(l.product_id)!.pro_name, link: byId.get(l.product_id)!.pro_link, quantity: l.quantity }));
  return { items, item_count: items.reduce((n, i) => n + i.quantity, 0) };
}

/** One cart line with its price: unit and line price in minor units of the product's currency (null: no price). */
export interface PricedCartItem {
  product_id: number;
  name: string;
  quantity: number;
  currency: string;
  unit_price: number | null;
  line_price: number | null;
}

/**
 * The cart as the cart page shows it: every line priced from pro_price, and the total per currency (a
 * cart mixing currencies cannot be checked out, and says so). `unpriced` counts lines with no price;
 * such a line is left out of the totals.
 */
export async function pricedCart(db: Kysely<DB>, lines: CartLine[]): Promise<{ items: PricedCartItem[]; item_count: number; totals: Array<{ currency: string; amount: number }>; unpriced: number }> {
  const ids = lines.map((l) => l.product_id);
  const products = ids.length
    ? await db.selectFrom('pro_products').select(['pro_product_id', 'pro_name', 'pro_price', 'pro_currency']).where('pro_product_id', 'in', ids).execute()
    : [];
  const byId = new Map(products.map((p) => [Number(p.pro_product_id), p]));
  const items = lines
    .filter((l) => byId.has(l.product_id))
    .map((l): PricedCartItem => {
      const p = byId.get(l.product_id)!;
      const unit = p.pro_price === null ? null : Number(p.pro_price);
      return { product_id: l.product_id, name: p.pro_name, quantity: l.quantity, currency: p.pro_currency.toLowerCase(), unit_price: unit, line_price: unit === null ? null : unit * l.quantity };
    });
  const totals = new Map<string, number>();
  for (const i of items) if (i.line_price !== null) totals.set(i.currency, (totals.get(i.currency) ?? 0) + i.line_price);
  return {
    items,
    item_count: items.reduce((n, i) => n + i.quantity, 0),
    totals: [...totals].map(([currency, amount]) => ({ currency, amount })),
    unpriced: items.filter((i) => i.unit_price === null).length,
  };
}
