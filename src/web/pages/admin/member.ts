import type { FastifyInstance } from 'fastify';
import { mayActOn } from '../../../accounts/authority.js';
import { formatMoney } from '../../../lib/money.js';
import { formatTimestamp } from '../../../lib/time.js';
import type { Services } from '../../../services.js';
import { driftOf, lastDriftReport } from '../../../store/reconcile/drift.js';
import { storeActive } from '../../../settings/store-active.js';
import { fetchUserTier } from '../../../tiers/features.js';
import { guardPage, sendViewerPage } from '../../forms.js';
import { html } from '../../html.js';
import { SOURCE_LABELS } from '../subscription.js';
import { adminNav } from './nav.js';

/** Statuses with a billing issue (DESIGN 14): the provider is retrying a failed renewal payment. */
const BILLING_ISSUE = ['in_grace', 'on_hold'];

/**
 * Admin → Member: who the member is, their tier as recorded, and every subscription they hold or held,
 * with its source, status, paid period, and (DESIGN 14) its grace end, billing issue and stated resume
 * time, so an operator sees a billing problem the way the member's own page reports it; what the last
 * scheduled reconciliation found different at the providers, and a "Resync billing" button (action
 * store_resync) that reads this member's subscriptions from the providers now and repairs what differs.
 */
export function memberAdminPage(web: FastifyInstance, services: Services): void {
  const { db } = services;
  web.get('/admin/members/:id', async (request, reply) => {
    const viewer = await guardPage(request, reply, services, 5);
    if (!viewer) return reply;
    const raw = String((request.params as Record<string, unknown>).id ?? '');
    const user = /^\d{1,9}$/.test(raw)
      ? await db
          .selectFrom('usr_users')
          .select(['usr_user_id', 'usr_email', 'usr_first_name', 'usr_last_name', 'usr_permission'])
          .where('usr_user_id', '=', Number(raw))
          .where('usr_delete_time', 'is', null)
          .executeTakeFirst()
      : undefined;
    if (!user) return sendViewerPage(reply, viewer, 'Not found', html`${adminNav()}<div class="card"><p>There is no such member.</p></div>`, 404);
    const userId = Number(user.usr_user_id);
    const tier = await fetchUserTier(db, userId, services.modelCaches.userTiers);
    const subs = await db
      .selectFrom('odi_order_items')
      .innerJoin('pro_products', 'pro_product_id', 'odi_pro_product_id')
      .select([
        'odi_order_item_id',
        'pro_name',
        'odi_price',
        'odi_currency',
        'odi_payment_source',
        'odi_subscription_reference',
        'odi_subscription_status',
        'odi_subscription_period_end',
        'odi_subscription_grace_until',
        'odi_subscription_resume_time',
        'odi_source_conflict_time',
      ])
      .where('odi_usr_user_id', '=', userId)
      .where('odi_is_subscription', '=', true)
      .where('odi_delete_time', 'is', null)
      .orderBy('odi_order_item_id', 'desc')
      .execute();
    const when = (d: Date | null) => (d ? formatTimestamp(d) : '—');
    const issues = subs.filter((s) => BILLING_ISSUE.includes(s.odi_subscription_status ?? ''));
    const name = [user.usr_first_name, user.usr_last_name].filter(Boolean).join(' ');
    const last = await lastDriftReport(db);
    const drift = driftOf(last.report, subs.map((s) => Number(s.odi_order_item_id)));
    const storeOn = storeActive(services.settings);
    const canResync = storeOn && mayActOn(viewer.user, { usr_user_id: userId, usr_permission: Number(user.usr_permission) });
    const body = html`${adminNav()}
<div class="card" id="member">
  <h2 style="overflow-wrap:anywhere">${user.usr_email}</h2>
  ${name ? html`<p class="help">${name}</p>` : ''}
  <p>Tier: <strong id="member-tier">${tier ? tier.displayName : 'none'}</strong></p>
  ${issues.length > 0
    ? html`<p class="notice warning" id="billing-issue" role="alert"><strong>Billing issue:</strong> ${issues.length === 1 ? 'a renewal payment' : `${issues.length} renewal payments`} failed; the provider is retrying. The member is asked to update their payment method at the provider.</p>`
    : ''}
</div>
<div class="card" style="overflow-x:auto">
  <h2>Subscriptions (${subs.length})</h2>
  ${subs.length === 0
    ? html`<p id="no-subscriptions">This member has no subscription.</p>`
    : html`<table id="subscriptions" class="stack"><thead><tr><th>Plan</th><th>Billed through</th><th>Status</th><th>Paid until</th><th>Grace until</th><th>Billing issue</th></tr></thead><tbody>
${subs.map(
  (s) => html`<tr data-order-item="${s.odi_order_item_id}" data-status="${s.odi_subscription_status ?? ''}"><td>${s.pro_name}<br><span class="help">#${s.odi_order_item_id} · ${formatMoney(s.odi_price === null ? null : Number(s.odi_price), s.odi_currency ?? 'usd')}${s.odi_subscription_reference ? ` · ${s.odi_subscription_reference}` : ''}</span></td>
<td class="source" data-label="Billed through">${s.odi_payment_source ? SOURCE_LABELS[s.odi_payment_source] : '—'}${s.odi_source_conflict_time ? html`<br><span class="help">second source, no tier</span>` : ''}</td>
<td class="status" data-label="Status">${s.odi_subscription_status ?? '—'}${s.odi_subscription_status === 'paused' && s.odi_subscription_resume_time ? html`<br><span class="help">resumes ${when(s.odi_subscription_resume_time)}</span>` : ''}</td>
<td class="period-end" data-label="Paid until">${when(s.odi_subscription_period_end)}</td>
<td class="grace-until" data-label="Grace until">${s.odi_subscription_status === 'in_grace' ? when(s.odi_subscription_grace_until) : '—'}</td>
<td class="billing-issue" data-label="Billing issue">${BILLING_ISSUE.includes(s.odi_subscription_status ?? '') ? 'Yes' : 'No'}</td></tr>`,
)}
</tbody></table>`}
</div>
<div class="card" id="drift"><h2>Billing drift</h2>
<p class="help">${last.run_time ? `Last reconciliation with the providers: ${last.run_time}${last.skipped ? ` (skipped: ${last.skipped})` : ''}${last.error ? ` (failed: ${last.error})` : ''}.` : 'The scheduled reconciliation has not run yet.'}</p>
${drift.length === 0
  ? html`<p id="no-drift">${last.report ? 'It found nothing different for this member.' : ''}</p>`
  : html`<table id="drift-entries" class="stack"><thead><tr><th>Item</th><th>Ours</th><th>Provider</th><th>Done</th></tr></thead><tbody>
${drift.map((d) => html`<tr data-order-item="${d.order_item_id}"><td>${d.order_item_id}</td><td data-label="Ours">${d.ours.status ?? '—'} ${d.ours.period_end ?? ''}</td><td data-label="Provider">${d.provider.status ?? '—'} (${d.provider.state}) ${d.provider.period_end ?? ''}</td><td class="action" data-label="Done">${d.action}</td></tr>`)}
</tbody></table>`}
${canResync
  ? html`<p><button type="button" class="primary" id="resync" data-action="store_resync" data-body="${JSON.stringify({ user_id: userId })}">Resync billing</button></p>
<p class="help">Reads this member's subscriptions from their providers now and repairs what differs (the provider's state wins).</p>`
  : html`<p class="help" id="no-resync">${storeOn ? 'You cannot resync the billing of a user with more permission than yours.' : 'The store is inactive: billing cannot be resynced.'}</p>`}
<p id="resync-result" role="status"></p>
</div>
<script src="/static/admin-member.js" defer></script>`;
    // A long address would not fit a phone's width as the page heading: the card shows it, wrapped.
    return sendViewerPage(reply, viewer, name ? `Member: ${name}` : `Member #${userId}`, body);
  });
}
