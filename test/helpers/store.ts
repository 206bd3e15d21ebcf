import { expect } from 'vitest';
import type { BillingSource } from '../../src/tiers/membership.js';
import { billingSourceStatuses } from '../../src/settings/billing-sources.js';
import type { TestApp } from './app.js';
import { tierMemberships } from './tiers.js';

/** One webhook delivery as the provider would send it. */
export interface Delivery {
  headers: Record<string, string>;
  body: string;
}

/** What a scenario says happened at the provider; each source's driver turns it into a signed delivery. */
export interface ProviderFact {
  userId: number;
  productId: number;
  /** The product's reference at this source (price id, plan id, store product id). */
  providerProductId: string;
  /** The provider's subscription reference. */
  ref: string;
  /** Provider event time. */
  at: Date;
  periodEnd: Date;
  eventId?: string;
}

/** Drives one billing source in the shared webhook scenarios. */
export interface SourceDriver {
  source: BillingSource;
  /** Settings and fakes for this source (called once per app). */
  setup(t: TestApp): Promise<void>;
  teardown(): Promise<void>;
  /** The product column naming this source's product reference. */
  productColumn: 'pro_card_price_id' | 'pro_wallet_plan_id' | 'pro_ios_product_id' | 'pro_android_product_id';
  purchase(t: TestApp, f: ProviderFact): Promise<Delivery>;
  renewal(t: TestApp, f: ProviderFact): Promise<Delivery>;
  expiry(t: TestApp, f: ProviderFact): Promise<Delivery>;
  refund(t: TestApp, f: ProviderFact): Promise<Delivery>;
  cancelScheduled(t: TestApp, f: ProviderFact): Promise<Delivery>;
  cancelUndone(t: TestApp, f: ProviderFact): Promise<Delivery>;
  /** The same delivery with a signature that does not verify (wrong key or secret). */
  badSignature(t: TestApp, f: ProviderFact): Promise<Delivery>;
  /** A delivery signed correctly but whose timestamp (or signing certificate or token) has expired. */
  expired(t: TestApp, f: ProviderFact): Promise<Delivery>;
  /** A signed delivery whose body was changed after signing. */
  tampered(t: TestApp, f: ProviderFact): Promise<Delivery>;
  /** A delivery without its signature material. */
  unsigned(t: TestApp, f: ProviderFact): Promise<Delivery>;
}

let seq = 0;
export const uniqueRef = (prefix: string) => `${prefix}${Date.now().toString(36)}${++seq}`;

/**
 * Settings that make the iOS store count as configured without anything in a test ever talking to it: a
 * stand-in billing source for tests whose own source is not fully configured (the card driver sets only
 * the webhook secret), since the store is open only with at least one configured source. Sources a test
 * configures itself replace these.
 */
export const STAND_IN_SOURCE_SETTINGS: Record<string, string> = {
  ios_store_bundle_id: 'org.example.standin',
  ios_store_environment: 'Sandbox',
  ios_store_root_certificates: '-----BEGIN CERTIFICATE-----\nc3RhbmQtaW4=\n-----END CERTIFICATE-----\n',
};

/** Makes sure at least one billing source is configured (the stand-in when none is). */
export async function ensureBillingSource(t: TestApp): Promise<void> {
  if (billingSourceStatuses(t.services.settings).some((s) => s.configured)) return;
  for (const [k, v] of Object.entries(STAND_IN_SOURCE_SETTINGS)) await t.services.settings.set(k, v);
}

/** Switches the store on (products_active and subscriptions_active, with a configured billing source) or off. */
export async function setStoreActive(t: TestApp, active: boolean): Promise<void> {
  if (active) await ensureBillingSource(t);
  await t.services.settings.set('products_active', active);
  await t.services.settings.set('subscriptions_active', active);
}

/** A product linked to a tier (or not), with this source's product reference and a price in cents. */
export async function createProduct(
  t: TestApp,
  o: { tierId: number | null; refs?: Partial<Record<SourceDriver['productColumn'], string>>; price?: number; name?: string },
): Promise<number> {
  const row = await t.services.db
    .insertInto('pro_products')
    .values({
      pro_name: o.name ?? `Product ${++seq}`,
      pro_link: `product-${seq}-${Date.now().toString(36)}`,
      pro_is_active: true,
      pro_sbt_subscription_tier_id: o.tierId,
      pro_price: o.price ?? 1500,
      ...o.refs,
    })
    .returning('pro_product_id')
    .executeTakeFirstOrThrow();
  return Number(row.pro_product_id);
}

export function postWebhook(t: TestApp, source: string, d: Delivery) {
  return t.request({ method: 'POST', url: `/api/v1/webhooks/${source}`, headers: d.headers, payload: d.body });
}

/** The order item recorded for a subscription. */
export function itemFor(t: TestApp, source: BillingSource, ref: string) {
  return t.services.db
    .selectFrom('odi_order_items')
    .selectAll()
    .where('odi_payment_source', '=', source)
    .where('odi_subscription_reference', '=', ref)
    .executeTakeFirst();
}

export function webhookLogs(t: TestApp, source: string) {
  return t.services.db.selectFrom('wbh_webhook_logs').selectAll().where('wbh_provider', '=', source).orderBy('wbh_webhook_log_id').execute();
}

/** The scenarios' provider clock: day 0 is an hour before the test app's clock starts. */
export const PROVIDER_T0 = new Date('2026-03-01T11:00:00Z');
const DAY = 86_400_000;
export const providerDay = (days: number) => new Date(PROVIDER_T0.getTime() + days * DAY);

/** The one tier the user holds (null: none); a user never holds two. */
export async function tierOf(t: TestApp, userId: number): Promise<number | null> {
  const rows = await tierMemberships(t, userId);
  expect(rows.length).toBeLessThanOrEqual(1);
  return rows[0]?.grm_sbt_subscription_tier_id ?? null;
}
