import { businessError } from '../../http/errors.js';
import { defineAction } from '../define.js';
import { MAX_CART_LINES, MAX_LINE_QUANTITY, cartLines, cartSummary } from '../../store/cart-state.js';

/** Adds a product to the website session's cart; guests may use it, API keys may not. */
export default defineAction({
  name: 'cart',
  description: 'Add an item to the cart (website sessions, guests included)',
  mutates: true,
  auth: { allow_guest: true, requires_browser_session: true, session_write: true },
  input: {
    product_id: { type: 'int', required: true, min: 1 },
    quantity: { type: 'int', min: 1, max: MAX_LINE_QUANTITY },
  },
  async run({ input, db, session }) {
    const quantity = input.quantity ?? 1;
    const product = (await (db as any)
      .selectFrom('pro_products')
      .select(['pro_product_id', 'pro_name', 'pro_is_active', 'pro_max_cart_count', 'pro_delete_time'])
      .where('pro_product_id', '=', input.product_id)
      .executeTakeFirst()) as { pro_name: string; pro_is_active: boolean | null; pro_max_cart_count: number | null; pro_delete_time: Date | null } | undefined;
    if (!product || product.pro_delete_time !== null || product.pro_is_active !== true) throw businessError('That product is not available');
    const lines = cartLines(session);
    const existing = lines.find((l) => l.product_id === input.product_id);
    const total = (existing?.quantity ?? 0) + quantity;
    const cap = product.pro_max_cart_count && product.pro_max_cart_count > 0 ? Math.min(product.pro_max_cart_count, MAX_LINE_QUANTITY) : MAX_LINE_QUANTITY;
    if (total > cap) throw businessError(`At most ${cap} of ${product.pro_name} fit in one cart`);
    if (existing) existing.quantity = total;
    else {
      if (lines.length >= MAX_CART_LINES) throw businessError(`A cart holds at most ${MAX_CART_LINES} different products`);
      lines.push({ product_id: input.product_id, quantity });
    }
    session!.cart = lines;
    return { data: await cartSummary(db, lines), message: `${product.pro_name} added to your cart.`, redirect: '/cart' };
  },
});
