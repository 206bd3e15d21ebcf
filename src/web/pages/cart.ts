import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { cartLines, pricedCart } from '../../store/cart-state.js';
import { formatMoney } from '../../lib/money.js';
import { isApiError } from '../../http/errors.js';
import type { Services } from '../../services.js';
import { createCheckout } from '../../store/checkout.js';
import { hostedCheckoutOrigin } from '../../store/providers/checkout-origin.js';
import { billingSourceConfigured } from '../../settings/billing-sources.js';
import { checkPostedForm, guardPage, sendViewerPage, tokenInput, type Viewer } from '../forms.js';
import { html } from '../html.js';
import { pageViewer } from '../viewer.js';

const CHECKOUT_FORM = 'cart-checkout';

/** The site's own origin, for the absolute return addresses the hosted checkout needs. */
const origin = (request: FastifyRequest) => `${request.protocol}://${request.host}`;

async function renderCart(reply: FastifyReply, services: Services, viewer: Viewer, notice: { error?: string; info?: string } = {}, status = 200) {
  const { items, item_count, totals, unpriced } = await pricedCart(services.db, cartLines(viewer.session?.data ?? null));
  const signedIn = viewer.session?.userId != null;
  const checkout = !services.store.active()
    ? html`<p class="help" id="checkout-closed">The store is closed, so nothing can be bought at the moment.</p>`
    : !billingSourceConfigured(services.settings, 'card_processor')
      ? html`<p class="help" id="checkout-unavailable">Online checkout is not available on this site yet, so nothing can be bought here at the moment.</p>`
      : signedIn
      ? html`<form method="post" action="/cart/checkout">${tokenInput(viewer, CHECKOUT_FORM)}<button class="primary" type="submit" id="checkout">Check out</button></form>`
      : html`<p><a href="/login?next=%2Fcart" id="checkout-sign-in">Sign in to check out</a> — your cart is kept.</p>`;
  const body = html`${notice.info ? html`<p class="notice" role="status" id="cart-notice">${notice.info}</p>` : ''}
${notice.error ? html`<p class="error" role="alert" id="cart-error">${notice.error}</p>` : ''}
${items.length === 0
  ? html`<div class="card"><p id="cart-empty">Your cart is empty. <a href="/pricing" id="cart-pricing">See the plans and prices</a>.</p></div>`
  : html`<div class="card"><table id="cart-items" class="stack cart"><thead><tr><th>Product</th><th class="num">Price</th><th class="num">Quantity</th><th class="num">Amount</th></tr></thead><tbody>
${items.map((i) => html`<tr data-product="${i.product_id}"><td class="name">${i.name}</td><td class="num unit-price" data-label="Price">${formatMoney(i.unit_price, i.currency)}</td><td class="num quantity" data-label="Quantity">${i.quantity}</td><td class="num line-price" data-label="Amount">${formatMoney(i.line_price, i.currency)}</td></tr>`)}
</tbody><tfoot>${totals.map((t) => html`<tr class="total" data-currency="${t.currency}"><th scope="row" colspan="3">Total${totals.length > 1 ? html` (${t.currency.toUpperCase()})` : ''}</th><td class="num cart-total" data-label="Total">${formatMoney(t.amount, t.currency)}</td></tr>`)}</tfoot></table>
<p id="cart-count">${item_count} item${item_count === 1 ? '' : 's'}.</p>
${totals.length > 1 ? html`<p class="error" id="cart-currencies">These products are priced in different currencies and cannot be bought in one checkout: empty the cart and choose products of one currency.</p>` : ''}
${unpriced > 0 ? html`<p class="help" id="cart-unpriced">${unpriced === 1 ? 'One product has' : `${unpriced} products have`} no price yet and ${unpriced === 1 ? 'is' : 'are'} not in the total.</p>` : ''}
${checkout}
<button class="secondary" type="button" id="cart-clear">Empty cart</button> <span id="cart-result" role="status"></span></div>
<script src="/static/cart.js" defer></script>`}`;
  // The checkout form is answered with a redirect to the provider's hosted checkout.
  return sendViewerPage(reply, viewer, 'Cart', body, status, { formActionOrigins: [hostedCheckoutOrigin(services.settings)] });
}

/**
 * The cart page (guests included) and its checkout: a signed-in member's cart becomes a pending order
 * and the card processor's hosted checkout, which returns to /checkout/return and then the order page.
 */
export function cartPage(web: FastifyInstance, services: Services): void {
  web.get('/cart', async (request, reply) => {
    const viewer = await pageViewer(request, services);
    const cancelled = (request.query as Record<string, unknown>).checkout === 'cancelled';
    return renderCart(reply, services, viewer, cancelled ? { info: 'Checkout was cancelled; your cart is as you left it.' } : {});
  });

  web.post('/cart/checkout', async (request, reply) => {
    const viewer = await pageViewer(request, services);
    // A guest signs in first (the cart survives sign-in) and comes back to the cart, not to this POST.
    if (!viewer.user) return reply.redirect('/login?next=%2Fcart', 303);
    if (!(await checkPostedForm(request, reply, viewer, CHECKOUT_FORM))) return reply;
    try {
      const { url } = await createCheckout(services.db, services, viewer.user.usr_user_id, cartLines(viewer.session?.data ?? null), {
        successUrl: `${origin(request)}/checkout/return?session_id={CHECKOUT_SESSION_ID}`,
        cancelUrl: `${origin(request)}/cart?checkout=cancelled`,
        customerEmail: viewer.user.usr_email,
      });
      return reply.redirect(url, 303);
    } catch (e) {
      if (isApiError(e) && e.status === 422) {
        // The order is kept as failed with its reason (ord_error) for the admin; the member gets a clear message.
        if (e.data.order_id !== undefined) request.log.warn({ orderId: e.data.order_id, reason: e.data.reason }, 'checkout could not start');
        return renderCart(reply, services, viewer, { error: e.message }, 422);
      }
      throw e;
    }
  });

  // The hosted checkout sends the buyer back here with its session id; the order page takes over.
  web.get('/checkout/return', async (request, reply) => {
    const viewer = await guardPage(request, reply, services, 0);
    if (!viewer) return reply;
    const sessionId = (request.query as Record<string, unknown>).session_id;
    const order =
      typeof sessionId === 'string' && sessionId.length > 0 && sessionId.length <= 255
        ? await services.db
            .selectFrom('ord_orders')
            .select('ord_order_id')
            .where('ord_stripe_session_id', '=', sessionId)
            .where('ord_usr_user_id', '=', viewer.user.usr_user_id)
            .executeTakeFirst()
        : undefined;
    if (!order) return sendViewerPage(reply, viewer, 'Order not found', html`<div class="card"><p>There is no such order.</p></div>`, 404);
    return reply.redirect(`/order/${order.ord_order_id}`, 303);
  });
}
