import type { FastifyInstance } from 'fastify';
import { cartLines, cartSummary } from '../../actions/store/cart-state.js';
import type { Services } from '../../services.js';
import { sendViewerPage } from '../forms.js';
import { html } from '../html.js';
import { pageViewer } from '../viewer.js';

/** The cart page: what the website session's cart holds (guests included). */
export function cartPage(web: FastifyInstance, services: Services): void {
  web.get('/cart', async (request, reply) => {
    const viewer = await pageViewer(request, services);
    const { items, item_count } = await cartSummary(services.db, cartLines(viewer.session?.data ?? null));
    const body =
      items.length === 0
        ? html`<div class="card"><p id="cart-empty">Your cart is empty.</p></div>`
        : html`<div class="card" style="overflow-x:auto"><table id="cart-items"><thead><tr><th>Product</th><th>Quantity</th></tr></thead><tbody>
${items.map((i) => html`<tr data-product="${i.product_id}"><td>${i.name}</td><td>${i.quantity}</td></tr>`)}
</tbody></table><p>${item_count} item${item_count === 1 ? '' : 's'}.</p>
<button class="primary" type="button" id="cart-clear">Empty cart</button> <span id="cart-result" role="status"></span></div>
<script src="/static/cart.js" defer></script>`;
    return sendViewerPage(reply, viewer, 'Cart', body);
  });
}
