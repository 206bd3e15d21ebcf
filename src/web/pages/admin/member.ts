import type { FastifyInstance } from 'fastify';
import { mayActOn } from '../../../accounts/authority.js';
import { formatTimestamp } from '../../../lib/time.js';
import type { Services } from '../../../services.js';
import { driftOf, lastDriftReport } from '../../../store/reconcile/drift.js';
import { storeActive } from '../../../tiers/gate-context.js';
import { guardPage, sendViewerPage } from '../../forms.js';
import { html } from '../../html.js';
import { adminNav } from './nav.js';

const SOURCES: Record<string, string> = {
  card_processor: 'Card',
  wallet_provider: 'Wallet',
  ios_store: 'App Store',
  android_store: 'Google Play',
};

/**
 * Admin → a member: their tier, their subscriptions as we hold them, what the last scheduled
 * reconciliation found different at the providers, and a "Resync billing" button (action store_resync)
 * that reads this member's subscriptions from the providers now and repairs what differs.
 */
export function memberPage(web: FastifyInstance, services: Services): void {
  const { db } = services;
  web.get('/admin/members/:id', async (request, reply) => {
    const viewer = await guardPage(request, reply, services, 5);
    if (!viewer) return reply;
    const raw = (request.params as { id: string }).id;
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
    const tier = await db
      .selectFrom('grm_group_members')
      .innerJoin('sbt_subscription_tiers', 'sbt_subscription_tier_id', 'grm_sbt_subscription_tier_id')
      .select(['sbt_display_name', 'grm_assignment_method', 'grm_subscription_status'])
      .where('grm_foreign_key_id', '=', userId)
      .where('grm_sbt_subscription_tier_id', 'is not', null)
      .executeTakeFirst();
    const items = await db
      .selectFrom('odi_order_items')
      .innerJoin('pro_products', 'pro_product_id', 'odi_pro_product_id')
      .select(['odi_order_item_id', 'pro_name', 'odi_payment_source', 'odi_subscription_status', 'odi_subscription_period_end'])
      .where('odi_usr_user_id', '=', userId)
      .where('odi_payment_source', 'is not', null)
      .where('odi_subscription_status', 'is not', null)
      .orderBy('odi_order_item_id', 'desc')
      .execute();
    const last = await lastDriftReport(db);
    const drift = driftOf(last.report, items.map((i) => Number(i.odi_order_item_id)));
    const name = [user.usr_first_name, user.usr_last_name].filter(Boolean).join(' ');
    const canResync = storeActive(services.settings) && mayActOn(viewer.user, { usr_user_id: userId, usr_permission: Number(user.usr_permission) });
    const body = html`${adminNav()}
<div class="card" id="member"><h2>${user.usr_email}</h2>${name ? html`<p>${name}</p>` : ''}
<p id="member-tier">Tier: ${tier ? html`${tier.sbt_display_name} (${tier.grm_assignment_method}${tier.grm_subscription_status ? `, ${tier.grm_subscription_status}` : ''})` : 'none'}</p></div>
<div class="card" id="billing" style="overflow-x:auto"><h2>Subscriptions</h2>
${items.length === 0
  ? html`<p id="no-subscriptions">No subscriptions.</p>`
  : html`<table id="subscriptions" class="stack"><thead><tr><th>Item</th><th>Plan</th><th>Billed by</th><th>Status</th><th>Period end</th></tr></thead><tbody>
${items.map((i) => html`<tr data-order-item="${Number(i.odi_order_item_id)}"><td>${Number(i.odi_order_item_id)}</td><td data-label="Plan">${i.pro_name}</td><td data-label="Billed by">${SOURCES[i.odi_payment_source ?? ''] ?? i.odi_payment_source}</td><td class="status" data-label="Status">${i.odi_subscription_status}</td><td data-label="Period end">${i.odi_subscription_period_end ? formatTimestamp(i.odi_subscription_period_end) : '—'}</td></tr>`)}
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
  : html`<p class="help" id="no-resync">${storeActive(services.settings) ? 'You cannot resync the billing of a user with more permission than yours.' : 'The store is inactive: billing cannot be resynced.'}</p>`}
<p id="resync-result" role="status"></p>
</div>
<script src="/static/admin-member.js" defer></script>`;
    return sendViewerPage(reply, viewer, `Member ${user.usr_email}`, body);
  });
}
