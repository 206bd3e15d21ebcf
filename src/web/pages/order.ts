import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import { cartLines } from '../../store/cart-state.js';
import type { DB } from '../../db/types.js';
import { formatMoney } from '../../lib/money.js';
import { formatTimestamp } from '../../lib/time.js';
import type { Services } from '../../services.js';
import { ORDER_STATUS } from '../../store/orders.js';
import { guardPage, sendViewerPage } from '../forms.js';
import { html } from '../html.js';

const STATUS_TEXT: Record<number, { key: string; label: string }> = {
  [ORDER_STATUS.pending]: { key: 'pending', label: 'Waiting for payment confirmation' },
  [ORDER_STATUS.paid]: { key: 'paid', label: 'Paid' },
  [ORDER_STATUS.failed]: { key: 'failed', label: 'Payment failed' },
  [ORDER_STATUS.refunded]: { key: 'refunded', label: 'Refunded' },
};

interface OrderView {
  id: number;
  userId: number | null;
  status: number | null;
  total: number | null;
  currency: string;
  created: Date | null;
  items: Array<{ productId: number; name: string; price: number | null; currency: string; afterPurchase: string | null }>;
}

async function readOrder(db: Kysely<DB>, orderId: number): Promise<OrderView | null> {
  const q = db as unknown as Kysely<any>;
  const order = await q
    .selectFrom('ord_orders')
    .select(['ord_order_id', 'ord_usr_user_id', 'ord_status', 'ord_total_cost', 'ord_currency', 'ord_timestamp'])
    .where('ord_order_id', '=', orderId)
    .executeTakeFirst();
  if (!order) return null;
  const items = await q
    .selectFrom('odi_order_items')
    .innerJoin('pro_products', 'pro_product_id', 'odi_pro_product_id')
    .select(['odi_pro_product_id', 'pro_name', 'odi_price', 'odi_currency', 'pro_after_purchase_message'])
    .where('odi_ord_order_id', '=', orderId)
    .orderBy('odi_order_item_id')
    .execute();
  return {
    id: Number(order.ord_order_id),
    userId: order.ord_usr_user_id === null ? null : Number(order.ord_usr_user_id),
    status: order.ord_status === null ? null : Number(order.ord_status),
    total: order.ord_total_cost === null ? null : Number(order.ord_total_cost),
    currency: order.ord_currency ?? 'usd',
    created: order.ord_timestamp,
    items: items.map((i: any) => ({
      productId: Number(i.odi_pro_product_id),
      name: i.pro_name,
      price: i.odi_price === null ? null : Number(i.odi_price),
      currency: i.odi_currency ?? 'usd',
      afterPurchase: i.pro_after_purchase_message,
    })),
  };
}

/**
 * The order confirmation page the card processor's hosted checkout returns to. The payment is confirmed
 * by the provider's webhook, not by this visit: until it arrives the page says so and polls; once paid it
 * shows the products' after-purchase messages and takes the bought products out of the cart.
 */
export function orderPage(web: FastifyInstance, services: Services): void {
  web.get('/order/:id', async (request, reply) => {
    const viewer = await guardPage(request, reply, services, 0);
    if (!viewer) return reply;
    const id = Number((request.params as { id: string }).id);
    const order = Number.isSafeInteger(id) && id > 0 ? await readOrder(services.db, id) : null;
    // Someone else's order is indistinguishable from none (staff may look at any).
    if (!order || (order.userId !== viewer.user.usr_user_id && !viewer.isStaff)) {
      return sendViewerPage(reply, viewer, 'Order not found', html`<div class="card"><p>There is no such order.</p></div>`, 404);
    }
    const status = STATUS_TEXT[order.status ?? ORDER_STATUS.pending] ?? STATUS_TEXT[ORDER_STATUS.pending]!;
    if (status.key === 'paid' && viewer.session && order.userId === viewer.user.usr_user_id) {
      const bought = new Set(order.items.map((i) => i.productId));
      const lines = cartLines(viewer.session.data);
      if (lines.some((l) => bought.has(l.product_id))) {
        await services.webSessions.saveData(viewer.session.id, { ...viewer.session.data, cart: lines.filter((l) => !bought.has(l.product_id)) });
      }
    }
    const body = html`<div class="card" id="order" data-order-status="${status.key}">
<p>Order <strong>#${order.id}</strong>${order.created ? html` placed ${formatTimestamp(order.created)}` : ''}.</p>
<p id="order-status" role="status"><strong>${status.label}</strong>${status.key === 'pending' ? html` <span class="help">— this page refreshes when the payment provider confirms it.</span>` : ''}</p>
<div style="overflow-x:auto"><table id="order-items"><thead><tr><th>Product</th><th>Price</th></tr></thead><tbody>
${order.items.map((i) => html`<tr data-product="${i.productId}"><td>${i.name}</td><td>${formatMoney(i.price, i.currency)}</td></tr>`)}
</tbody></table></div>
<p>Total: <strong id="order-total">${formatMoney(order.total, order.currency)}</strong></p>
${status.key === 'paid' ? order.items.filter((i) => i.afterPurchase).map((i) => html`<p class="notice after-purchase">${i.afterPurchase}</p>`) : ''}
${status.key === 'paid' ? html`<p><a href="/profile/subscription">Your subscription</a></p>` : ''}
</div>
<script src="/static/order.js" defer></script>`;
    return sendViewerPage(reply, viewer, status.key === 'paid' ? 'Thank you for your order' : 'Your order', body);
  });
}
