import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.js';
import { formatMoney } from '../../lib/money.js';
import { formatTimestamp } from '../../lib/time.js';
import type { Services } from '../../services.js';
import { subscriptionRef } from '../../store/lifecycle/billing.js';
import { storeActive } from '../../settings/store-active.js';
import { isStoreBilled } from '../../store/lifecycle/refusals.js';
import { subscriptionSummary, type SubscriptionEntry, type SubscriptionSummary } from '../../store/lifecycle/summary.js';
import { guardPage, sendViewerPage } from '../forms.js';
import { profileNav } from './profile-nav.js';
import { html, type SafeHtml } from '../html.js';
import { featureInUse, featureLabel, showValue } from '../feature-display.js';

export const SOURCE_LABELS = {
  card_processor: 'Card',
  wallet_provider: 'Wallet (online payment account)',
  ios_store: 'App Store',
  android_store: 'Google Play',
  none: 'None',
} as const;

/** Where a store-billed subscriber manages their subscription: only the store that bills it can change it. */
const STORE_MANAGEMENT = {
  ios_store: { url: 'https://apps.apple.com/account/subscriptions', label: 'Manage in the App Store' },
  android_store: { url: 'https://play.google.com/store/account/subscriptions', label: 'Manage in Google Play' },
} as const;

/**
 * Where a member fixes a failed payment, per source (DESIGN 14): the card processor's billing portal
 * (through our route, which opens a portal session for the subscription's customer), the wallet
 * provider's automatic-payments page, each store's own subscription management page.
 */
const PAYMENT_FIX: Record<'card_processor' | 'wallet_provider' | 'ios_store' | 'android_store', { url: (orderItemId: number) => string; label: string; where: string }> = {
  card_processor: { url: (id) => `/profile/subscription/payment-method/${id}`, label: 'Update your card', where: 'in the card processor’s billing portal' },
  wallet_provider: { url: () => 'https://www.paypal.com/myaccount/autopay/', label: 'Update your payment method in PayPal', where: 'in your PayPal account (Automatic payments)' },
  ios_store: { url: () => STORE_MANAGEMENT.ios_store.url, label: 'Update your payment method in the App Store', where: 'in your App Store account' },
  android_store: { url: () => STORE_MANAGEMENT.android_store.url, label: 'Update your payment method in Google Play', where: 'in your Google Play account' },
};

const STATUS_LABELS: Record<SubscriptionEntry['status'], string> = {
  active: 'Active',
  cancelled: 'Cancelled',
  in_grace: 'Payment failed, retrying',
  on_hold: 'On hold: payment failed',
  paused: 'Paused',
};

/** What is wrong and what to do, for a subscription with a billing issue or a pause; nothing otherwise. */
function billingNotice(entry: SubscriptionEntry, details: EntryDetails): SafeHtml {
  const fix = details.source ? PAYMENT_FIX[details.source] : null;
  const action = fix ? html` <a class="fix-payment" href="${fix.url(entry.order_item_id)}" rel="noopener">${fix.label}</a>` : html``;
  const where = fix ? ` ${fix.where}` : '';
  if (entry.status === 'in_grace') {
    return html`<p class="notice warning billing-issue" role="alert"><strong>Your last payment did not go through.</strong> We will keep trying to charge it, and you keep your access until ${entry.grace_until ?? 'the retries end'}. To keep your subscription, update your payment method${where}.${action}</p>`;
  }
  if (entry.status === 'on_hold') {
    return html`<p class="notice warning billing-issue" role="alert"><strong>Your access is on hold because your payment did not go through.</strong> Update your payment method${where}; your access comes back as soon as the payment succeeds.${action}</p>`;
  }
  if (entry.status === 'paused') {
    const until = details.resumeTime ? ` until ${formatTimestamp(details.resumeTime)}` : '';
    return html`<p class="notice paused" role="status"><strong>Your subscription is paused${until}.</strong> Your access returns when it resumes.</p>`;
  }
  return html``;
}

/** Results the page reports after a control succeeded (the script reloads with ?done=...). */
const DONE_MESSAGES: Record<string, string> = {
  cancelled: 'Your subscription has been cancelled.',
  // An immediate cancel whose refund was made but which the provider then would not cancel (DESIGN 14).
  not_cancelled: 'The unused part of the period was refunded, but the payment provider could not cancel your subscription: it is still active and will renew. Please try cancelling again later.',
  reactivated: 'Your subscription has been reactivated.',
  changed: 'Your subscription has been changed.',
};

const PERIOD_WORDS: Record<string, string> = { day: 'day', week: 'week', month: 'month', year: 'year' };

interface TierOption {
  productId: number;
  productName: string;
  price: number | null;
  currency: string;
  period: string | null;
  tierName: string;
  tierLevel: number;
}

const perPeriod = (period: string | null) => (period && PERIOD_WORDS[period] ? ` per ${PERIOD_WORDS[period]}` : '');

/** Tier-linked products on sale: the upgrade and downgrade choices. */
async function tierOptions(db: Kysely<DB>): Promise<TierOption[]> {
  const rows = await (db as unknown as Kysely<any>)
    .selectFrom('pro_products')
    .innerJoin('sbt_subscription_tiers', 'sbt_subscription_tier_id', 'pro_sbt_subscription_tier_id')
    .select(['pro_product_id', 'pro_name', 'pro_price', 'pro_currency', 'pro_subscription_period', 'sbt_display_name', 'sbt_tier_level'])
    .where('pro_delete_time', 'is', null)
    .where((eb: any) => eb.or([eb('pro_is_active', 'is', null), eb('pro_is_active', '=', true)]))
    .where('sbt_delete_time', 'is', null)
    .where('sbt_is_active', '=', true)
    .orderBy('sbt_tier_level')
    .orderBy('pro_product_id')
    .execute();
  return rows.map((r: any) => ({
    productId: Number(r.pro_product_id),
    productName: r.pro_name,
    price: r.pro_price === null ? null : Number(r.pro_price),
    currency: r.pro_currency ?? 'usd',
    period: r.pro_subscription_period ?? null,
    tierName: r.sbt_display_name,
    tierLevel: Number(r.sbt_tier_level),
  }));
}

/** The id of the live tier of this name (tier names are unique among live tiers). */
async function liveTierId(db: Kysely<DB>, name: string): Promise<number | null> {
  const row = await db
    .selectFrom('sbt_subscription_tiers')
    .select('sbt_subscription_tier_id')
    .where('sbt_name', '=', name)
    .where('sbt_delete_time', 'is', null)
    .executeTakeFirst();
  return row ? Number(row.sbt_subscription_tier_id) : null;
}

interface EntryDetails {
  currency: string;
  source: 'card_processor' | 'wallet_provider' | 'ios_store' | 'android_store' | null;
  resumeTime: Date | null;
}

async function entryDetails(db: Kysely<DB>, ids: number[]): Promise<Map<number, EntryDetails>> {
  if (ids.length === 0) return new Map();
  const rows = await db
    .selectFrom('odi_order_items')
    .select(['odi_order_item_id', 'odi_currency', 'odi_payment_source', 'odi_subscription_resume_time'])
    .where('odi_order_item_id', 'in', ids)
    .execute();
  return new Map(
    rows.map((r) => [Number(r.odi_order_item_id), { currency: r.odi_currency ?? 'usd', source: r.odi_payment_source, resumeTime: r.odi_subscription_resume_time }]),
  );
}

/** The member's tier features: those of core and of active plugins (an inactive plugin's do nothing). */
function featureTable(summary: SubscriptionSummary, services: Pick<Services, 'plugins' | 'tiers'>): SafeHtml {
  const tier = summary.current_tier;
  if (!tier) return html`<p id="no-tier">You are not a member of any tier.</p>`;
  const registry = services.tiers.registry;
  const rows = Object.entries(tier.features).flatMap(([key, value]) => {
    const def = registry.get(key);
    if (!def || !featureInUse(services, def)) return [];
    const shown = typeof value === 'boolean' ? (value ? 'Yes' : 'No') : typeof value === 'number' ? showValue(value, def) : String(value);
    return [html`<tr data-feature="${key}"><td>${featureLabel(def)}</td><td>${shown}</td></tr>`];
  });
  return html`<p id="tier-name"><strong>${tier.display_name}</strong> <span class="help">(level ${tier.tier_level})</span></p>
${rows.length === 0 ? html`<p id="no-features" class="help">Your tier lists no features.</p>` : html`<table id="tier-features"><thead><tr><th>Feature</th><th>Your value</th></tr></thead><tbody>
${rows}
</tbody></table>`}`;
}

/** A control that asks for confirmation in the page, then calls a lifecycle action through serviceApi. */
function control(label: string, action: string, body: Record<string, unknown>, confirm: string, done: string, danger = false): SafeHtml {
  return html`<button type="button" class="${danger ? 'secondary danger' : 'primary'}" data-action="${action}" data-body="${JSON.stringify(body)}" data-confirm="${confirm}" data-done="${done}">${label}</button>`;
}

function subscriptionCard(entry: SubscriptionEntry, source: SubscriptionSummary['payment_source'], details: EntryDetails, services: Services, active: boolean, keepTierId: number | null): SafeHtml {
  const currency = details.currency;
  const settings = services.settings;
  const storeBilled = isStoreBilled(source === 'none' ? null : source);
  const cancelled = entry.status === 'cancelled';
  const controls: SafeHtml[] = [];
  if (storeBilled) {
    const store = STORE_MANAGEMENT[source as 'ios_store' | 'android_store'];
    controls.push(html`<a class="store-link" href="${store.url}" rel="noopener">${store.label}</a>`);
  } else if (active) {
    if (entry.can_cancel) {
      const timing = settings.get('subscription_cancellation_timing') === 'immediate' ? 'now' : 'at the end of the paid period';
      const refund = settings.get('subscription_cancellation_timing') === 'immediate' && settings.bool('subscription_cancellation_prorate') ? ' The unused part of the period will be refunded.' : '';
      controls.push(control('Cancel subscription', 'orders_recurring_action', { order_item_id: entry.order_item_id, recurring_action: 'cancel' }, `Cancel ${entry.name}? Your access ends ${timing}.${refund}`, 'cancelled', true));
    }
    if (entry.scheduled_change && keepTierId !== null) {
      controls.push(control('Keep my current tier', 'change_tier', { tier_id: keepTierId }, `Stay on your current tier? The change scheduled for ${entry.scheduled_change.effective_date ?? 'the end of the period'} is undone.`, 'changed'));
    }
    if (cancelled && settings.bool('subscription_reactivation_enabled')) {
      controls.push(control('Reactivate subscription', 'orders_recurring_action', { order_item_id: entry.order_item_id, recurring_action: 'reactivate' }, `Reactivate ${entry.name}? It will renew again on its renewal date.`, 'reactivated'));
    }
  }
  const dateLabel = cancelled ? 'Ends on' : entry.status === 'on_hold' || entry.status === 'paused' ? 'Paid until' : entry.status === 'in_grace' ? 'Payment due since' : 'Renews on';
  return html`<section class="subscription" data-order-item="${entry.order_item_id}" data-status="${entry.status}">
<h3>${entry.name}</h3>
<table class="billing"><tbody>
<tr><th>Billed through</th><td class="source">${SOURCE_LABELS[source]}</td></tr>
<tr><th>Price</th><td class="price">${formatMoney(entry.price, currency)}${perPeriod(entry.period)}</td></tr>
<tr><th>Status</th><td class="status">${STATUS_LABELS[entry.status]}</td></tr>
<tr><th>${dateLabel}</th><td class="date">${entry.renewal_or_end_date ?? '—'}</td></tr>
${entry.grace_until ? html`<tr><th>Access kept until</th><td class="grace-until">${entry.grace_until}</td></tr>` : ''}
</tbody></table>
${billingNotice(entry, details)}
${entry.scheduled_change ? html`<p class="notice scheduled">Changes to ${entry.scheduled_change.tier_name ?? entry.scheduled_change.name} on ${entry.scheduled_change.effective_date ?? 'the end of the period'}.</p>` : ''}
${storeBilled ? html`<p class="help">This subscription is billed by ${SOURCE_LABELS[source]}; change or cancel it there.</p>` : ''}
<div class="controls">${controls}</div>
</section>`;
}

function changeTierCard(summary: SubscriptionSummary, options: TierOption[], services: Services): SafeHtml {
  const current = summary.current_tier?.tier_level ?? null;
  const web = summary.subscriptions.find((s) => s.status === 'active');
  const downgrades = services.settings.bool('subscription_downgrades_enabled');
  const timing = services.settings.get('subscription_downgrade_timing') === 'immediate' ? 'now' : 'at the end of your paid period';
  const rows = options
    .filter((o) => current === null || o.tierLevel !== current)
    .filter((o) => current === null || o.tierLevel > current || downgrades)
    .map((o) => {
      const up = current === null || o.tierLevel > current;
      const price = html`${formatMoney(o.price, o.currency)}${perPeriod(o.period)}`;
      // Without a web subscription to change, choosing a tier is a purchase: into the cart, then checkout.
      const button = !web
        ? html`<button type="button" class="primary" data-action="cart" data-body="${JSON.stringify({ product_id: o.productId })}" data-next="/cart">Choose ${o.tierName}</button>`
        : up
          ? control(`Upgrade to ${o.tierName}`, 'change_tier', { product_id: o.productId }, `Upgrade to ${o.tierName} (${o.productName}) now? You are charged the prorated difference for the rest of this period.`, 'changed')
          : control(`Downgrade to ${o.tierName}`, 'change_tier', { product_id: o.productId }, `Downgrade to ${o.tierName} (${o.productName})? The change takes effect ${timing}.`, 'changed');
      return html`<tr data-product="${o.productId}"><td>${o.tierName}</td><td>${o.productName}</td><td>${price}</td><td>${button}</td></tr>`;
    });
  if (rows.length === 0) return html``;
  return html`<div class="card" id="change-tier"><h2>${web ? 'Change your tier' : 'Choose a tier'}</h2>
<div style="overflow-x:auto"><table><thead><tr><th>Tier</th><th>Plan</th><th>Price</th><th></th></tr></thead><tbody>${rows}</tbody></table></div></div>`;
}

/**
 * The member's subscription management view: tier and features, billing, renewal or end date, and the
 * upgrade, downgrade, cancel and reactivate controls that the settings and the subscription's source allow.
 * Every control calls the lifecycle actions through serviceApi, the same path native apps use.
 */
export function subscriptionPage(web: FastifyInstance, services: Services): void {
  web.get('/profile/subscription', async (request, reply) => {
    const viewer = await guardPage(request, reply, services, 0);
    if (!viewer) return reply;
    const { db, settings } = services;
    const summary = await subscriptionSummary(db, settings, services.tiers.registry, viewer.user.usr_user_id, services.modelCaches.userTiers);
    const active = storeActive(settings);
    const details = await entryDetails(db, summary.subscriptions.map((s) => s.order_item_id));
    const storeBilled = isStoreBilled(summary.payment_source === 'none' ? null : summary.payment_source);
    const keepTierId = summary.current_tier ? await liveTierId(db, summary.current_tier.name) : null;
    const done = DONE_MESSAGES[String((request.query as Record<string, unknown>).done ?? '')];
    const body = html`${profileNav('/profile/subscription')}${done ? html`<p class="notice" id="done" role="status">${done}</p>` : ''}
<div class="card" id="current-tier"><h2>Your tier</h2>${featureTable(summary, services)}</div>
<div class="card" id="billing"><h2>Billing</h2>
${summary.subscriptions.length === 0
  ? html`<p id="no-subscription">You have no subscription${summary.current_tier ? ' (your tier was assigned by the site)' : ''}.</p>`
  : summary.subscriptions.map((s) => subscriptionCard(s, summary.payment_source, details.get(s.order_item_id) ?? { currency: 'usd', source: null, resumeTime: null }, services, active, keepTierId))}
${active ? '' : html`<p class="help" id="store-inactive">Subscriptions are not sold here at the moment, so they cannot be changed.</p>`}
</div>
${active && !storeBilled ? changeTierCard(summary, await tierOptions(db), services) : ''}
<div class="card" id="confirm" role="alertdialog" aria-labelledby="confirm-text" hidden>
<p id="confirm-text"></p>
<button type="button" class="primary" id="confirm-yes">Confirm</button> <button type="button" class="link" id="confirm-no">Go back</button>
</div>
<p id="result" class="error" role="alert"></p>
<script src="/static/subscription.js" defer></script>`;
    return sendViewerPage(reply, viewer, 'Your subscription', body);
  });

  // The card processor's billing portal for one of the member's own card subscriptions: a portal session
  // for the subscription's customer, which returns to this page.
  web.get('/profile/subscription/payment-method/:id', async (request, reply) => {
    const viewer = await guardPage(request, reply, services, 0);
    if (!viewer) return reply;
    const raw = String((request.params as Record<string, unknown>).id ?? '');
    const id = /^\d{1,12}$/.test(raw) ? Number(raw) : null;
    const item =
      id === null
        ? undefined
        : await services.db
            .selectFrom('odi_order_items')
            .select('odi_order_item_id')
            .where('odi_order_item_id', '=', id)
            .where('odi_usr_user_id', '=', viewer.user.usr_user_id)
            .where('odi_payment_source', '=', 'card_processor')
            .executeTakeFirst();
    const ref = item ? await subscriptionRef(services.db, id!) : null;
    if (!ref) return sendViewerPage(reply, viewer, 'Not found', html`<div class="card"><p class="error">You have no card subscription here.</p></div>`, 404);
    let url: string;
    try {
      url = await services.store.cardProcessor().billingPortalUrl(ref, `${request.protocol}://${request.host}/profile/subscription`);
    } catch {
      return sendViewerPage(
        reply,
        viewer,
        'Billing portal unavailable',
        html`<div class="card"><p class="error" id="portal-unavailable">The card processor’s billing portal cannot be opened right now. Please try again later.</p><p><a href="/profile/subscription">Back to your subscription</a></p></div>`,
        502,
      );
    }
    return reply.redirect(url, 303);
  });
}
