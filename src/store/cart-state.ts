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
