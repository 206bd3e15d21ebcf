import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { mayActOn } from '../../../accounts/authority.js';
import { formatMoney } from '../../../lib/money.js';
import { formatTimestamp } from '../../../lib/time.js';
import type { Services } from '../../../services.js';
import { driftOf, lastDriftReport } from '../../../store/reconcile/drift.js';
import { storeActive } from '../../../settings/store-active.js';
import { TierInputError } from '../../../tiers/errors.js';
import { fetchUserTier } from '../../../tiers/features.js';
import { STAFF_PERMISSION } from '../../../tiers/gating.js';
import { listTiers } from '../../../tiers/tiers.js';
import { flashNotice, setFlash, takeFlash } from '../../flash.js';
import { bodyField, checkPostedForm, fieldBlock, guardPage, sendViewerPage, tokenInput, type Viewer } from '../../forms.js';
import { html } from '../../html.js';
import { SOURCE_LABELS } from '../subscription.js';
import { selectInput } from './list-query.js';
import { DETAIL_ROWS, memberKeys, tierHistory, tierMembership } from './member-details.js';
import { ASSIGNMENT_LABELS } from './members.js';
import { adminNav } from './nav.js';
import { listOrders } from './order-search.js';
import { ordersTable } from './orders.js';

type StaffViewer = NonNullable<Awaited<ReturnType<typeof guardPage>>>;

const TIER_FORM = 'member-tier';
/** usr_permission of a superadmin: only they are offered login-as here (the route itself allows any staff member acting on a lower or equal account). */
const SUPERADMIN_PERMISSION = 10;

const permissionWord = (p: number) => (p >= SUPERADMIN_PERMISSION ? 'superadmin' : p >= STAFF_PERMISSION ? 'staff' : 'member');

/** What a subscription's period end means in its state. */
const PERIOD_END_WORDS: Record<string, string> = {
  active: 'renews',
  cancelled: 'ends',
  in_grace: 'renewal was due',
  on_hold: 'renewal was due',
  paused: 'paid until',
  expired: 'ended',
  refunded: 'ended',
  replaced: 'ended',
};

/** Tier change reasons in words (change tracking's closed set; anything else is shown as recorded). */
const REASON_WORDS: Record<string, string> = {
  purchase: 'purchase',
  renewal: 'renewal',
  recovery: 'billing recovered',
  expiry: 'subscription expired',
  on_hold: 'billing on hold',
  paused: 'subscription paused',
  cancellation: 'cancelled',
  refund: 'refunded',
  manual: 'manual assignment',
  upgrade: 'upgrade',
  downgrade: 'downgrade',
  purchase_refused_other_source: 'purchase refused: another source is active',
  purchase_skipped_lower_level: 'purchase kept the higher tier',
  renewal_skipped_lower_level: 'renewal kept the higher tier',
  recovery_skipped_lower_level: 'recovery kept the higher tier',
  purchase_skipped_tier_unavailable: 'purchase: tier unavailable',
  renewal_skipped_tier_unavailable: 'renewal: tier unavailable',
  recovery_skipped_tier_unavailable: 'recovery: tier unavailable',
};

/** Statuses with a billing issue (DESIGN 14): the provider is retrying a failed renewal payment. */
const BILLING_ISSUE = ['in_grace', 'on_hold'];

/**
 * Admin → Member: who the member is, their tier as recorded, and every subscription they hold or held,
 * with its source, status, paid period, and (DESIGN 14) its grace end, billing issue and stated resume
 * time, so an operator sees a billing problem the way the member's own page reports it; what the last
 * scheduled reconciliation found different at the providers, and a "Resync billing" button (action
 * store_resync) that reads this member's subscriptions from the providers now and repairs what differs.
 * Also: the profile, how the tier was assigned, the member's orders (failed and pending too) and refunds,
 * their tier history from change tracking, their API keys and app sessions (never a secret), and the staff
 * actions: assign or remove the tier (a manual assignment, checked against the member's permission), and
 * for superadmins a "Sign in as" button posting to the login-as route, which makes its own checks.
 */
export function memberAdminPage(web: FastifyInstance, services: Services): void {
  const { db } = services;

  const loadUser = (raw: string) =>
    /^\d{1,9}$/.test(raw)
      ? db
          .selectFrom('usr_users')
          .select(['usr_user_id', 'usr_email', 'usr_first_name', 'usr_last_name', 'usr_permission', 'usr_create_time', 'usr_lastlogin_time', 'usr_email_is_verified', 'usr_is_disabled'])
          .where('usr_user_id', '=', Number(raw))
          .where('usr_delete_time', 'is', null)
          .executeTakeFirst()
      : Promise.resolve(undefined);
  type Member = NonNullable<Awaited<ReturnType<typeof loadUser>>>;
  const idParam = (request: FastifyRequest) => String((request.params as Record<string, unknown>).id ?? '');
  const notFound = (reply: FastifyReply, viewer: Viewer) => sendViewerPage(reply, viewer, 'Not found', html`${adminNav()}<div class="card"><p>There is no such member.</p></div>`, 404);

  async function render(reply: FastifyReply, viewer: StaffViewer, user: Member, opts: { tierError?: string; status?: number } = {}) {
    const userId = Number(user.usr_user_id);
    const target = { usr_user_id: userId, usr_permission: Number(user.usr_permission) };
    const mayAct = mayActOn(viewer.user, target);
    const now = services.clock.now();
    const [tier, membership, tiers, orders, history, keys] = await Promise.all([
      fetchUserTier(db, userId, services.modelCaches.userTiers),
      tierMembership(db, userId),
      listTiers(db, { activeOnly: true }),
      listOrders(db, { status: null, source: null, userId, limit: DETAIL_ROWS, offset: 0 }),
      tierHistory(db, userId),
      memberKeys(db, userId, now),
    ]);
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
    const canResync = storeOn && mayAct;
    const refunds = orders.rows.flatMap((o) => [
      ...o.items.filter((i) => i.refundTime !== null || (i.refundAmount ?? 0) > 0).map((i) => ({ orderId: o.orderId, what: i.product, amount: i.refundAmount, currency: i.currency, time: i.refundTime, note: i.refundNote })),
      ...(o.refund && !o.items.some((i) => i.refundTime !== null) ? [{ orderId: o.orderId, what: 'the order', amount: o.refund.amount, currency: o.currency, time: o.refund.time, note: o.refund.note }] : []),
    ]);
    const canLoginAs = viewer.user.usr_permission >= SUPERADMIN_PERMISSION && viewer.user.usr_user_id !== userId && mayAct;
    const body = html`${adminNav()}
${flashNotice(await takeFlash(db, viewer.session))}
<div class="card" id="member">
  <h2 style="overflow-wrap:anywhere">${user.usr_email}</h2>
  ${name ? html`<p class="help">${name}</p>` : ''}
  <table id="profile"><tbody>
    <tr><th scope="row">Name</th><td class="name">${name || '—'}</td></tr>
    <tr><th scope="row">Email</th><td class="email" style="overflow-wrap:anywhere">${user.usr_email}${user.usr_email_is_verified ? ' (verified)' : ' (not verified)'}</td></tr>
    <tr><th scope="row">Created</th><td class="created">${formatTimestamp(user.usr_create_time)}</td></tr>
    <tr><th scope="row">Last sign-in</th><td class="last-login">${when(user.usr_lastlogin_time)}</td></tr>
    <tr><th scope="row">Permission</th><td class="permission">${permissionWord(Number(user.usr_permission))} (${user.usr_permission})${user.usr_is_disabled ? ' · disabled' : ''}</td></tr>
  </tbody></table>
  <p>Tier: <strong id="member-tier">${tier ? tier.displayName : 'none'}</strong></p>
  <p id="tier-how">${membership
    ? html`${membership.name}${membership.deleted ? ' (deleted tier: grants nothing)' : membership.active ? '' : ' (inactive tier: grants nothing)'}: assigned by <strong class="method">${ASSIGNMENT_LABELS[membership.method] ?? membership.method}</strong>${membership.how ? html` (<span class="how">${membership.how}</span>)` : ''}${membership.source ? html` through ${SOURCE_LABELS[membership.source] ?? membership.source}` : ''} on ${formatTimestamp(membership.assigned)}.`
    : 'In no tier.'}</p>
  ${issues.length > 0
    ? html`<p class="notice warning" id="billing-issue" role="alert"><strong>Billing issue:</strong> ${issues.length === 1 ? 'a renewal payment' : `${issues.length} renewal payments`} failed; the provider is retrying. The member is asked to update their payment method at the provider.</p>`
    : ''}
</div>
<div class="card" id="staff-actions">
  <h2>Staff actions</h2>
  ${mayAct && tiers.length === 0 ? html`<p class="help" id="no-tiers">There is no active tier to assign. <a href="/admin/tiers">Tiers</a></p>` : ''}
  ${mayAct
    ? html`${tiers.length === 0 ? '' : html`<form method="post" action="/admin/members/${userId}/tier" id="assign-tier">
    ${tokenInput(viewer, TIER_FORM)}
    ${fieldBlock('tier_id', 'Put in tier', selectInput('tier_id', tiers.map((t) => [String(t.sbt_subscription_tier_id), `${t.sbt_display_name} (level ${t.sbt_tier_level})`] as const), membership ? String(membership.tierId) : ''), opts.tierError, 'Recorded as a manual assignment; it replaces any tier the member has, also one they pay for.')}
    <button class="primary" type="submit" data-action="assign">Assign tier</button>
  </form>`}
  ${membership
    ? html`<form method="post" action="/admin/members/${userId}/tier/remove" id="remove-tier" data-confirm="Remove ${user.usr_email} from ${membership.name}? They lose the tier’s features now.">${tokenInput(viewer, TIER_FORM)}<button class="secondary danger" type="submit" data-action="remove">Remove from ${membership.name}</button></form>`
    : ''}`
    : html`<p class="help" id="no-actions">${opts.tierError ?? 'You cannot change a user with more permission than yours.'}</p>`}
  ${canLoginAs
    ? html`<form method="post" action="/admin/users/${userId}/login-as" id="login-as" data-confirm="Sign in as ${user.usr_email}? You will see the site as they do, until you sign out.">${tokenInput(viewer, 'login-as')}<button class="secondary" type="submit">Sign in as this member</button></form>`
    : ''}
</div>
<div class="card" style="overflow-x:auto">
  <h2>Subscriptions (${subs.length})</h2>
  ${subs.length === 0
    ? html`<p id="no-subscriptions">This member has no subscription.</p>`
    : html`<table id="subscriptions" class="stack"><thead><tr><th>Plan</th><th>Billed through</th><th>Status</th><th>Renewal or end</th><th>Grace until</th><th>Billing issue</th></tr></thead><tbody>
${subs.map(
  (s) => html`<tr data-order-item="${s.odi_order_item_id}" data-status="${s.odi_subscription_status ?? ''}"><td>${s.pro_name}<br><span class="help">#${s.odi_order_item_id} · ${formatMoney(s.odi_price === null ? null : Number(s.odi_price), s.odi_currency ?? 'usd')}${s.odi_subscription_reference ? ` · ${s.odi_subscription_reference}` : ''}</span></td>
<td class="source" data-label="Billed through">${s.odi_payment_source ? SOURCE_LABELS[s.odi_payment_source] : '—'}${s.odi_source_conflict_time ? html`<br><span class="help">second source, no tier</span>` : ''}</td>
<td class="status" data-label="Status">${s.odi_subscription_status ?? '—'}${s.odi_subscription_status === 'paused' && s.odi_subscription_resume_time ? html`<br><span class="help">resumes ${when(s.odi_subscription_resume_time)}</span>` : ''}</td>
<td class="period-end" data-label="Renewal or end">${s.odi_subscription_period_end ? `${PERIOD_END_WORDS[s.odi_subscription_status ?? ''] ?? 'paid until'} ${when(s.odi_subscription_period_end)}` : '—'}</td>
<td class="grace-until" data-label="Grace until">${s.odi_subscription_status === 'in_grace' ? when(s.odi_subscription_grace_until) : '—'}</td>
<td class="billing-issue" data-label="Billing issue">${BILLING_ISSUE.includes(s.odi_subscription_status ?? '') ? 'Yes' : 'No'}</td></tr>`,
)}
</tbody></table>
<p class="help">An active subscription renews at the end of its paid period; a cancelled one ends then. A billing issue (in_grace, on_hold) means the renewal payment failed and the provider is retrying.</p>`}
</div>
<div class="card" id="member-orders">
  <h2>Orders (${orders.total})</h2>
  ${orders.rows.length === 0 ? html`<p id="no-orders">This member has no order.</p>` : ordersTable(orders.rows, { member: false })}
  ${orders.total > orders.rows.length ? html`<p class="help">The latest ${orders.rows.length} are shown.</p>` : ''}
</div>
<div class="card" id="member-refunds">
  <h2>Refunds (${refunds.length})</h2>
  ${refunds.length === 0
    ? html`<p id="no-refunds">No refunds.</p>`
    : html`<table id="refunds" class="stack"><thead><tr><th>Order</th><th>What</th><th>Amount</th><th>When</th><th>Note</th></tr></thead><tbody>
${refunds.map((r) => html`<tr data-order="${r.orderId}"><td>#${r.orderId}</td><td data-label="What">${r.what}</td><td class="amount" data-label="Amount">${formatMoney(r.amount, r.currency)}</td><td data-label="When">${when(r.time)}</td><td data-label="Note">${r.note ?? '—'}</td></tr>`)}
</tbody></table>`}
</div>
<div class="card" id="member-tier-history">
  <h2>Tier history</h2>
  ${history.length === 0
    ? html`<p id="no-tier-history">No tier changes recorded.</p>`
    : html`<table id="tier-history" class="stack"><thead><tr><th>When</th><th>Change</th><th>Why</th><th>By</th></tr></thead><tbody>
${history.map(
  (h) => html`<tr data-change="${h.id}" data-reason="${h.reason}"><td class="time">${formatTimestamp(h.time)}</td>
<td class="change" data-label="Change">${h.from ?? 'no tier'} → ${h.to ?? 'no tier'}${h.requested ? html`<br><span class="help">asked for ${h.requested}</span>` : ''}</td>
<td class="reason" data-label="Why">${REASON_WORDS[h.reason] ?? h.reason}${h.how ? ` (${h.how})` : ''}${h.source ? html`<br><span class="help">${SOURCE_LABELS[h.source as keyof typeof SOURCE_LABELS] ?? h.source}${h.reference ? ` · ${h.reference}` : ''}</span>` : ''}</td>
<td class="by" data-label="By" style="overflow-wrap:anywhere">${h.by ? html`<a href="/admin/members/${h.by.id}">${h.by.email ?? `#${h.by.id}`}</a>` : 'the system'}</td></tr>`,
)}
</tbody></table>`}
</div>
<div class="card" id="member-keys">
  <h2>API keys and app sessions</h2>
  ${keys.length === 0
    ? html`<p id="no-keys">No API keys and no app signed in.</p>`
    : html`<table id="keys" class="stack"><thead><tr><th>Name</th><th>Kind</th><th>Created</th><th>Last used</th><th>State</th></tr></thead><tbody>
${keys.map(
  (k) => html`<tr data-key="${k.id}" data-type="${k.type}"><td style="overflow-wrap:anywhere">${k.name ?? (k.type === 'session' ? 'Unnamed device' : 'Unnamed key')}</td>
<td class="kind" data-label="Kind">${k.type === 'session' ? 'App session' : `API key (permission ${k.permission})`}</td>
<td data-label="Created">${formatTimestamp(k.created)}</td><td data-label="Last used">${k.lastUsed ? formatTimestamp(k.lastUsed) : 'never'}</td>
<td class="state" data-label="State">${k.active ? (k.expires ? `active until ${formatTimestamp(k.expires)}` : 'active') : 'inactive or expired'}</td></tr>`,
)}
</tbody></table>`}
  <p class="help">Secrets are never shown. Machine keys are managed under <a href="/admin/api-keys">API keys</a>.</p>
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
    return sendViewerPage(reply, viewer, name ? `Member: ${name}` : `Member #${userId}`, body, opts.status ?? 200, { wide: true });
  }

  web.get('/admin/members/:id', async (request, reply) => {
    const viewer = await guardPage(request, reply, services, 5);
    if (!viewer) return reply;
    const user = await loadUser(idParam(request));
    if (!user) return notFound(reply, viewer);
    return render(reply, viewer, user);
  });

  /**
   * Assign (tier_id) or remove the member's tier: a manual assignment through the tier membership service,
   * the path the tier members screen uses. The target's permission is checked on the row locked for it.
   */
  async function changeTier(request: FastifyRequest, reply: FastifyReply, remove: boolean) {
    const viewer = await guardPage(request, reply, services, 5);
    if (!viewer) return reply;
    if (!(await checkPostedForm(request, reply, viewer, TIER_FORM))) return reply;
    const user = await loadUser(idParam(request));
    if (!user) return notFound(reply, viewer);
    const userId = Number(user.usr_user_id);
    const rawTier = bodyField(request, 'tier_id');
    const tierId = remove ? null : /^\d{1,9}$/.test(rawTier) ? Number(rawTier) : undefined;
    if (tierId === undefined) return render(reply, viewer, user, { tierError: 'Choose a tier.', status: 400 });
    let outcome: 'done' | 'forbidden' | 'no_tier';
    try {
      outcome = await db.transaction().execute(async (trx) => {
        const target = await trx.selectFrom('usr_users').select(['usr_user_id', 'usr_permission']).where('usr_user_id', '=', userId).forUpdate().executeTakeFirstOrThrow();
        if (!mayActOn(viewer.user, { usr_user_id: Number(target.usr_user_id), usr_permission: Number(target.usr_permission) })) return 'forbidden';
        const membership = services.tiers.membership.within(trx);
        if (remove) {
          const current = await trx.selectFrom('grm_group_members').select('grm_group_member_id').where('grm_foreign_key_id', '=', userId).where('grm_sbt_subscription_tier_id', 'is not', null).executeTakeFirst();
          if (!current) return 'no_tier';
        }
        await membership.assignManually(userId, tierId, viewer.user.usr_user_id);
        return 'done';
      });
    } catch (e) {
      if (!(e instanceof TierInputError)) throw e;
      return render(reply, viewer, user, { tierError: e.fields.tier === 'is not active' ? 'That tier is not active.' : 'There is no such tier.', status: 400 });
    }
    if (outcome === 'forbidden') return render(reply, viewer, user, { tierError: 'You cannot change the tier of a user with more permission than yours.', status: 403 });
    if (outcome === 'no_tier') return render(reply, viewer, user, { tierError: 'This member is in no tier.', status: 400 });
    await setFlash(db, viewer.session, { id: 'member-notice', text: remove ? 'Tier removed.' : 'Tier assigned.' });
    return reply.redirect(`/admin/members/${userId}`, 303);
  }
  web.post('/admin/members/:id/tier', async (request, reply) => changeTier(request, reply, false));
  web.post('/admin/members/:id/tier/remove', async (request, reply) => changeTier(request, reply, true));
}
