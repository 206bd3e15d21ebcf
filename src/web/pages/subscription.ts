import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.js';
import { formatByteSize } from '../../lib/byte-size.js';
import { formatMoney } from '../../lib/money.js';
import type { Services } from '../../services.js';
import { isStoreBilled, storeActive } from '../../store/lifecycle/refusals.js';
import { subscriptionSummary, type SubscriptionEntry, type SubscriptionSummary } from '../../store/lifecycle/summary.js';
import { activeFeatureRegistry } from '../../tiers/index.js';
import { guardPage, sendViewerPage } from '../forms.js';
import { html, type SafeHtml } from '../html.js';
import { featureLabel, isByteFeature } from '../feature-display.js';

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

async function entryCurrencies(db: Kysely<DB>, ids: number[]): Promise<Map<number, string>> {
  if (ids.length === 0) return new Map();
  const rows = await (db as unknown as Kysely<any>)
    .selectFrom('odi_order_items')
    .select(['odi_order_item_id', 'odi_currency'])
    .where('odi_order_item_id', 'in', ids)
    .execute();
  return new Map(rows.map((r: any) => [Number(r.odi_order_item_id), r.odi_currency ?? 'usd']));
}

function featureTable(summary: SubscriptionSummary): SafeHtml {
  const tier = summary.current_tier;
  if (!tier) return html`<p id="no-tier">You are not a member of any tier.</p>`;
  const registry = activeFeatureRegistry();
  const shown = (key: string, v: unknown) => {
    const def = registry.get(key);
    if (typeof v === 'boolean') return v ? 'Yes' : 'No';
    return def && typeof v === 'number' && isByteFeature(def) ? formatByteSize(v) : String(v);
  };
  return html`<p id="tier-name"><strong>${tier.display_name}</strong> <span class="help">(level ${tier.tier_level})</span></p>
<table id="tier-features"><thead><tr><th>Feature</th><th>Your value</th></tr></thead><tbody>
${Object.entries(tier.features).map(([key, value]) => html`<tr data-feature="${key}"><td>${registry.get(key) ? featureLabel(registry.get(key)!) : key}</td><td>${shown(key, value)}</td></tr>`)}
</tbody></table>`;
}

/** A control that asks for confirmation in the page, then calls a lifecycle action through serviceApi. */
function control(label: string, action: string, body: Record<string, unknown>, confirm: string, done: string, danger = false): SafeHtml {
  return html`<button type="button" class="${danger ? 'secondary danger' : 'primary'}" data-action="${action}" data-body="${JSON.stringify(body)}" data-confirm="${confirm}" data-done="${done}">${label}</button>`;
}

function subscriptionCard(entry: SubscriptionEntry, source: SubscriptionSummary['payment_source'], currency: string, services: Services, active: boolean, keepTierId: number | null): SafeHtml {
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
  const dateLabel = cancelled ? 'Ends on' : 'Renews on';
  return html`<section class="subscription" data-order-item="${entry.order_item_id}" data-status="${entry.status}">
<h3>${entry.name}</h3>
<table class="billing"><tbody>
<tr><th>Billed through</th><td class="source">${SOURCE_LABELS[source]}</td></tr>
<tr><th>Price</th><td class="price">${formatMoney(entry.price, currency)}${perPeriod(entry.period)}</td></tr>
<tr><th>Status</th><td class="status">${cancelled ? 'Cancelled' : 'Active'}</td></tr>
<tr><th>${dateLabel}</th><td class="date">${entry.renewal_or_end_date ?? '—'}</td></tr>
</tbody></table>
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
    const summary = await subscriptionSummary(db, settings, viewer.user.usr_user_id);
    const active = storeActive(settings);
    const currencies = await entryCurrencies(db, summary.subscriptions.map((s) => s.order_item_id));
    const storeBilled = isStoreBilled(summary.payment_source === 'none' ? null : summary.payment_source);
    const keepTierId = summary.current_tier ? await liveTierId(db, summary.current_tier.name) : null;
    const done = DONE_MESSAGES[String((request.query as Record<string, unknown>).done ?? '')];
    const body = html`${done ? html`<p class="notice" id="done" role="status">${done}</p>` : ''}
<div class="card" id="current-tier"><h2>Your tier</h2>${featureTable(summary)}</div>
<div class="card" id="billing"><h2>Billing</h2>
${summary.subscriptions.length === 0
  ? html`<p id="no-subscription">You have no subscription${summary.current_tier ? ' (your tier was assigned by the site)' : ''}.</p>`
  : summary.subscriptions.map((s) => subscriptionCard(s, summary.payment_source, currencies.get(s.order_item_id) ?? 'usd', services, active, keepTierId))}
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
}
