import type { FastifyInstance } from 'fastify';
import type { PaymentSource } from '../../../db/types.js';
import { formatMoney } from '../../../lib/money.js';
import { formatTimestamp } from '../../../lib/time.js';
import type { Services } from '../../../services.js';
import { BILLING_SOURCES } from '../../../tiers/membership.js';
import { fieldBlock, guardPage, sendViewerPage } from '../../forms.js';
import { html, type SafeHtml } from '../../html.js';
import { SOURCE_LABELS } from '../subscription.js';
import { PAGE_SIZE, pager, readListQuery, selectInput } from './list-query.js';
import { adminNav } from './nav.js';
import { listOrders, ORDER_STATUS_KEYS, ORDER_STATUS_LABELS, type OrderRow, type OrderStatusKey } from './order-search.js';

const BASE = '/admin/orders';
const FILTERS = ['status', 'source'] as const;

/** Orders as a table that stacks on a phone: status (a failed order's error under it), amount, source, reference, items. */
export function ordersTable(rows: OrderRow[], opts: { member: boolean }): SafeHtml {
  return html`<table id="orders" class="stack"><thead><tr><th>Order</th>${opts.member ? html`<th>Member</th>` : ''}<th>Status</th><th>Amount</th><th>Source</th><th>Provider reference</th><th>Items</th></tr></thead><tbody>
${rows.map(
  (o) => html`<tr data-order="${o.orderId}" data-status="${o.status ?? ''}"><td>#${o.orderId}<br><span class="help">${formatTimestamp(o.time)}</span></td>
${opts.member ? html`<td class="member" data-label="Member" style="overflow-wrap:anywhere">${o.user ? html`<a href="/admin/members/${o.user.id}">${o.user.email}</a>` : 'guest'}</td>` : ''}
<td class="status" data-label="Status">${o.status ? ORDER_STATUS_LABELS[o.status] : 'unknown'}${o.status === 'failed' && o.error ? html`<br><span class="help error-text">${o.error}</span>` : ''}${o.refund ? html`<br><span class="help refund">refunded ${formatMoney(o.refund.amount, o.currency)} on ${formatTimestamp(o.refund.time)}</span>` : ''}</td>
<td class="amount" data-label="Amount">${formatMoney(o.amount, o.currency)} <span class="help">${o.currency.toUpperCase()}</span></td>
<td class="source" data-label="Source">${o.source ? SOURCE_LABELS[o.source] : '—'}</td>
<td class="reference" data-label="Provider reference" style="overflow-wrap:anywhere">${o.reference ? html`<code class="ident">${o.reference.value}</code> <span class="help">${o.reference.kind}</span>` : '—'}</td>
<td class="items" data-label="Items">${o.items.length === 0 ? '—' : o.items.map((i, n) => html`${n > 0 ? html`<br>` : ''}${i.product}${i.subscription ? html` <span class="help">(subscription)</span>` : ''}`)}</td></tr>`,
)}
</tbody></table>`;
}

/**
 * Admin → Orders: every order, newest first, whatever its state (pending, paid, failed, refunded), with
 * its amount, member, billing source and the provider's reference; filtered by status and source, 25 a
 * page. Soft-deleted orders are left out.
 */
export function ordersListPage(web: FastifyInstance, services: Services): void {
  web.get(BASE, async (request, reply) => {
    const viewer = await guardPage(request, reply, services, 5);
    if (!viewer) return reply;
    const { values, errors, page } = readListQuery(request.query, FILTERS);
    if (values.status !== '' && !errors.status && !ORDER_STATUS_KEYS.includes(values.status as OrderStatusKey)) errors.status = `Expected one of ${ORDER_STATUS_KEYS.join(', ')}.`;
    if (values.source !== '' && !errors.source && !BILLING_SOURCES.includes(values.source as PaymentSource)) errors.source = `Expected one of ${BILLING_SOURCES.join(', ')}.`;
    const bad = Object.keys(errors).length > 0;
    const result = bad
      ? { total: 0, rows: [] }
      : await listOrders(services.db, {
          status: values.status ? (values.status as OrderStatusKey) : null,
          source: values.source ? (values.source as PaymentSource) : null,
          limit: PAGE_SIZE,
          offset: (page - 1) * PAGE_SIZE,
        });
    const kept = Object.fromEntries(FILTERS.map((k) => [k, errors[k] ? '' : values[k]!]));
    const filtering = FILTERS.some((k) => kept[k] !== '');
    const body = html`${adminNav()}
<div class="card">
  <h2>Filter orders</h2>
  ${bad ? html`<p class="error" id="filter-error" role="alert">The list could not be shown: correct the marked fields.</p>` : ''}
  <form method="get" action="${BASE}" id="order-filters">
    <div class="grid" style="margin:0">
      ${fieldBlock('status', 'Status', selectInput('status', [['', 'Any status'], ...ORDER_STATUS_KEYS.map((s) => [s, ORDER_STATUS_LABELS[s]] as const)], values.status!), errors.status)}
      ${fieldBlock('source', 'Billing source', selectInput('source', [['', 'Any source'], ...BILLING_SOURCES.map((s) => [s, SOURCE_LABELS[s]] as const)], values.source!), errors.source)}
    </div>
    ${errors.page ? html`<p class="field-error" id="page-error" role="alert">${errors.page}</p>` : ''}
    <button class="primary" type="submit">Filter</button>
    ${filtering ? html` <a href="${BASE}" id="clear-filters">Clear</a>` : ''}
  </form>
</div>
<div class="card">
  <h2>Orders <span class="help" id="order-total">(${result.total})</span></h2>
  ${result.rows.length === 0 ? html`<p id="no-orders">${bad ? 'Nothing listed.' : filtering ? 'No order matches.' : 'No orders yet.'}</p>` : ordersTable(result.rows, { member: true })}
  ${bad ? '' : pager(BASE, kept, page, result.total, 'Orders')}
</div>`;
    return sendViewerPage(reply, viewer, 'Orders', body, bad ? 400 : 200, { wide: true });
  });
}
