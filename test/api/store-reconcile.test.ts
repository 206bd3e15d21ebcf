import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reconcileSubscriptions } from '../../src/store/reconcile/reconcile.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { androidDriver } from '../helpers/providers/android-driver.js';
import { cardDriver } from '../helpers/providers/card-driver.js';
import { makeAppleChain } from '../helpers/providers/apple-signer.js';
import { FakeAppStoreApi, makeInAppKey } from '../helpers/providers/fake-app-store-api.js';
import { FakeStripe } from '../helpers/providers/fake-stripe.js';
import { IOS_BUNDLE_ID, iosDriver } from '../helpers/providers/ios-driver.js';
import { walletDriver } from '../helpers/providers/wallet-driver.js';
import { createProduct, itemFor, postWebhook, providerDay, setStoreActive, tierOf as tierOfUser, uniqueRef, type Delivery, type ProviderFact, type SourceDriver } from '../helpers/store.js';
import { changeRows, createTier, type TestTier } from '../helpers/tiers.js';

const wallet = walletDriver();
const android = androidDriver();
const ios = iosDriver();
const inAppKey = makeInAppKey();
/** Signs with the iOS driver's test authority, minted by its setup. */
let appStore: FakeAppStoreApi;
const stripe = new FakeStripe();
const DAY = 86_400_000;
const at = providerDay;
const secs = (d: Date) => Math.floor(d.getTime() / 1000);
const ts = (d: Date) => d.toISOString().slice(0, 19).replace('T', ' ');

/** What the provider holds for a subscription: live until periodEnd, ended, or a billing issue. */
type ProviderState = 'active' | 'cancelled' | 'expired' | BillingIssue;
type BillingIssue = 'in_grace' | 'on_hold' | 'paused';

interface Source {
  driver: SourceDriver;
  /** The setting naming the provider's API base (pointed at a closed port to take the provider down). */
  baseSetting: string;
  /** periodEnd: in_grace, the grace end where the provider states one (the App Store's, Play's). */
  set(f: ProviderFact, state: ProviderState, periodEnd: Date): Promise<void>;
  /**
   * The billing issues this provider reports, each with the grace end we then hold (a store's own; a web
   * source's grace setting after the period end we recorded, when the failed renewal was due).
   */
  issues: Partial<Record<BillingIssue, { graceUntil: Date | null }>>;
}

const SOURCES: Source[] = [
  {
    driver: cardDriver,
    baseSetting: 'card_processor_api_base',
    async set(f, state, periodEnd) {
      const sub = stripe.subscriptions.get(f.ref) ?? stripe.addSubscription(f.ref, f.providerProductId, secs(periodEnd), { user_id: String(f.userId), product_id: String(f.productId) });
      sub.status = state === 'expired' ? 'canceled' : state === 'in_grace' ? 'past_due' : state === 'on_hold' ? 'unpaid' : state === 'paused' ? 'paused' : 'active';
      sub.cancel_at_period_end = state === 'cancelled';
      sub.current_period_end = secs(periodEnd);
      sub.items.data[0]!.current_period_end = secs(periodEnd);
    },
    // card_processor_grace_days (7) after the recorded period end (day 30).
    issues: { in_grace: { graceUntil: at(37) }, on_hold: { graceUntil: null }, paused: { graceUntil: null } },
  },
  {
    driver: wallet,
    baseSetting: 'wallet_provider_api_base',
    async set(f, state, periodEnd) {
      const existing = wallet.fake.subscriptions.get(f.ref);
      wallet.fake.addSubscription({
        ...existing,
        id: f.ref,
        plan_id: f.providerProductId,
        status: state === 'expired' ? 'EXPIRED' : state === 'cancelled' ? 'CANCELLED' : state === 'on_hold' ? 'SUSPENDED' : 'ACTIVE',
        billing_info: { next_billing_time: state === 'active' ? periodEnd.toISOString() : null },
      });
    },
    issues: { on_hold: { graceUntil: null } },
  },
  {
    driver: ios,
    baseSetting: 'ios_store_api_base',
    async set(f, state, periodEnd) {
      const issue = state === 'in_grace' || state === 'on_hold';
      appStore.set(f.ref, {
        status: state === 'expired' ? 2 : state === 'on_hold' ? 3 : state === 'in_grace' ? 4 : 1,
        // In a billing issue the latest transaction is the period that was not renewed.
        transaction: { productId: f.providerProductId, purchaseDate: f.at.getTime(), originalPurchaseDate: f.at.getTime(), expiresDate: (issue ? f.periodEnd : periodEnd).getTime(), type: 'Auto-Renewable Subscription', inAppOwnershipType: 'PURCHASED', quantity: 1 },
        renewal: {
          productId: f.providerProductId,
          autoRenewProductId: f.providerProductId,
          autoRenewStatus: state === 'active' || issue ? 1 : 0,
          ...(issue ? { isInBillingRetryPeriod: true } : {}),
          ...(state === 'in_grace' ? { gracePeriodExpiresDate: periodEnd.getTime() } : {}),
        },
      });
    },
    issues: { in_grace: { graceUntil: at(36) }, on_hold: { graceUntil: null } },
  },
  {
    driver: android,
    baseSetting: 'android_store_api_base',
    async set(f, state, periodEnd) {
      const current = android.play.subscriptions.get(f.ref) ?? {};
      android.play.subscriptions.set(f.ref, {
        ...current,
        kind: 'androidpublisher#subscriptionPurchaseV2',
        subscriptionState: {
          active: 'SUBSCRIPTION_STATE_ACTIVE',
          cancelled: 'SUBSCRIPTION_STATE_CANCELED',
          expired: 'SUBSCRIPTION_STATE_EXPIRED',
          in_grace: 'SUBSCRIPTION_STATE_IN_GRACE_PERIOD',
          on_hold: 'SUBSCRIPTION_STATE_ON_HOLD',
          paused: 'SUBSCRIPTION_STATE_PAUSED',
        }[state],
        lineItems: [{ productId: f.providerProductId, expiryTime: periodEnd.toISOString() }],
        ...(state === 'paused' ? { pausedStateContext: { autoResumeTime: at(60).toISOString() } } : {}),
      });
    },
    issues: { in_grace: { graceUntil: at(36) }, on_hold: { graceUntil: null }, paused: { graceUntil: null } },
  },
];

let t: TestApp;
let silver: TestTier;
beforeAll(async () => {
  t = await createTestApp();
  await setStoreActive(t, true);
  silver = await createTier(t, { name: 'silver', level: 20 });
  for (const s of SOURCES) await s.driver.setup(t);
  appStore = new FakeAppStoreApi(ios.chain, inAppKey, IOS_BUNDLE_ID);
  await stripe.start();
  await appStore.start();
  for (const [name, value] of Object.entries({
    card_processor_api_key: 'sk_test_reconcile',
    card_processor_api_base: stripe.base,
    ios_store_api_key_id: inAppKey.keyId,
    ios_store_api_issuer_id: inAppKey.issuerId,
    ios_store_api_private_key: inAppKey.privateKeyPem,
    ios_store_api_base: appStore.base,
  })) {
    await t.services.settings.set(name, value);
  }
});
afterAll(async () => {
  for (const s of SOURCES) await s.driver.teardown();
  await stripe.stop();
  await appStore.stop();
  await t.close();
});

const tierOf = (userId: number) => tierOfUser(t, userId);
const reconcile = (opts: Parameters<typeof reconcileSubscriptions>[2]) => reconcileSubscriptions(t.services.store.context(), t.services.tiers.membership, opts);

async function ok(d: Promise<Delivery>, source: string) {
  const res = await postWebhook(t, source, await d);
  expect(res.statusCode, res.body).toBe(200);
  return res.json.data;
}

/** A member who bought the silver plan at day 0, paid until day 30, as the provider and we both hold it. */
async function subscriber(s: Source): Promise<ProviderFact & { itemId: number }> {
  const providerProductId = uniqueRef(`${s.driver.source}-product-`);
  const productId = await createProduct(t, { tierId: silver.tierId, refs: { [s.driver.productColumn]: providerProductId } });
  const { userId } = await t.createUser();
  const f: ProviderFact = { userId, productId, providerProductId, ref: uniqueRef('sub_'), at: at(0), periodEnd: at(30) };
  await s.set(f, 'active', f.periodEnd);
  const data = await ok(s.driver.purchase(t, f), s.driver.source);
  expect(data.outcomes[0]).toMatchObject({ outcome: 'granted', grant: 'joined' });
  const item = await itemFor(t, s.driver.source, f.ref);
  expect(item).toMatchObject({ odi_subscription_status: 'active', odi_subscription_period_end: f.periodEnd });
  return { ...f, itemId: Number(item!.odi_order_item_id) };
}

describe.each(SOURCES)('reconciliation: $driver.source', (s) => {
  const source = s.driver.source;

  it('a subscription that ended while its expiry event was lost: a dry run reports it and changes nothing; the run removes the tier', async () => {
    const f = await subscriber(s);
    await s.set(f, 'expired', f.periodEnd);
    t.clock.set(new Date(at(31).getTime() + 3600_000));
    const before = await changeRows(t, f.userId);

    const dry = await reconcile({ userId: f.userId, dryRun: true });
    const entry = {
      order_item_id: f.itemId,
      source,
      ours: { status: 'active', period_end: ts(f.periodEnd) },
      provider: { status: 'expired', state: expect.any(String), period_end: expect.toBeOneOf([ts(f.periodEnd), null]) },
      action: 'expired',
    };
    expect(dry).toEqual({ checked: 1, drift: [entry], applied: 0, unreachable: [], dry_run: true });
    expect(await tierOf(f.userId)).toBe(silver.tierId);
    expect(await itemFor(t, source, f.ref)).toMatchObject({ odi_subscription_status: 'active' });
    expect(await changeRows(t, f.userId)).toHaveLength(before.length);

    const run = await reconcile({ userId: f.userId });
    expect(run).toEqual({ checked: 1, drift: [entry], applied: 1, unreachable: [], dry_run: false });
    expect(await tierOf(f.userId)).toBeNull();
    expect(await itemFor(t, source, f.ref)).toMatchObject({ odi_subscription_status: 'expired' });
    const rows = await changeRows(t, f.userId);
    expect(rows).toHaveLength(before.length + 1);
    expect(rows.at(-1)).toMatchObject({ cht_change_reason: 'expiry', cht_reference_type: 'order_item', cht_reference_id: f.itemId, cht_old_value: String(silver.tierId), cht_new_value: null });
    expect(JSON.parse(rows.at(-1)!.cht_metadata!)).toMatchObject({ source, how: 'reconcile' });

    // Agreed now: a second run finds nothing.
    expect(await reconcile({ userId: f.userId })).toEqual({ checked: 1, drift: [], applied: 0, unreachable: [], dry_run: false });
  });

  it('a subscription that renewed while the renewal was lost: the run extends the period and keeps the tier', async () => {
    const f = await subscriber(s);
    await s.set(f, 'active', at(60));
    t.clock.set(new Date(at(31).getTime() + 3600_000));
    const run = await reconcile({ userId: f.userId });
    expect(run).toEqual({
      checked: 1,
      drift: [{ order_item_id: f.itemId, source, ours: { status: 'active', period_end: ts(f.periodEnd) }, provider: { status: 'active', state: expect.any(String), period_end: ts(at(60)) }, action: 'renewed' }],
      applied: 1,
      unreachable: [],
      dry_run: false,
    });
    expect(await tierOf(f.userId)).toBe(silver.tierId);
    expect(await itemFor(t, source, f.ref)).toMatchObject({ odi_subscription_status: 'active', odi_subscription_period_end: at(60) });
    const last = (await changeRows(t, f.userId)).at(-1)!;
    expect(last).toMatchObject({ cht_change_reason: 'renewal', cht_reference_id: f.itemId, cht_new_value: String(silver.tierId) });
    expect(JSON.parse(last.cht_metadata!)).toMatchObject({ source, how: 'reconcile' });
  });

  it('a cancellation made at the provider while its event was lost: marked cancelled, the tier kept until the period ends', async () => {
    const f = await subscriber(s);
    await s.set(f, 'cancelled', f.periodEnd);
    t.clock.set(at(10));
    const run = await reconcile({ userId: f.userId });
    expect(run.drift).toEqual([expect.objectContaining({ order_item_id: f.itemId, action: 'cancelled', provider: expect.objectContaining({ status: 'cancelled' }) })]);
    expect(run.applied).toBe(1);
    expect(await itemFor(t, source, f.ref)).toMatchObject({ odi_subscription_status: 'cancelled', odi_subscription_cancel_at_period_end: true });
    expect(await tierOf(f.userId)).toBe(silver.tierId);
  });

  const statusTrail = async (userId: number) =>
    (await changeRows(t, userId)).filter((r) => r.cht_field_name === 'subscription_status').map((r) => `${r.cht_old_value}>${r.cht_new_value}:${r.cht_change_reason}`);

  it.each(Object.entries(s.issues) as Array<[BillingIssue, { graceUntil: Date | null }]>)(
    'a lost %s event while we hold it active: a dry run reports it; the run applies it (in grace the tier is kept, otherwise removed)',
    async (issue, expected) => {
      const f = await subscriber(s);
      // In grace a store states the grace end (day 36); the period stays at day 30.
      await s.set(f, issue, issue === 'in_grace' ? at(36) : f.periodEnd);
      t.clock.set(new Date(at(31).getTime() + 3600_000));
      const dry = await reconcile({ userId: f.userId, dryRun: true });
      expect(dry.drift).toEqual([
        { order_item_id: f.itemId, source, ours: { status: 'active', period_end: ts(f.periodEnd) }, provider: expect.objectContaining({ status: issue }), action: issue },
      ]);
      expect(dry.applied).toBe(0);
      expect(await itemFor(t, source, f.ref)).toMatchObject({ odi_subscription_status: 'active' });
      expect(await tierOf(f.userId)).toBe(silver.tierId);

      const run = await reconcile({ userId: f.userId });
      expect(run).toEqual({ checked: 1, drift: dry.drift, applied: 1, unreachable: [], dry_run: false });
      expect(await itemFor(t, source, f.ref)).toMatchObject({
        odi_subscription_status: issue,
        odi_subscription_period_end: f.periodEnd,
        odi_subscription_grace_until: expected.graceUntil,
        ...(issue === 'paused' && source === 'android_store' ? { odi_subscription_resume_time: at(60) } : {}),
      });
      expect(await statusTrail(f.userId)).toEqual([`active>${issue}:${issue}`]);
      if (issue === 'in_grace') {
        expect(await tierOf(f.userId)).toBe(silver.tierId);
      } else {
        expect(await tierOf(f.userId)).toBeNull();
        const last = (await changeRows(t, f.userId)).filter((r) => r.cht_field_name === 'tier_membership').at(-1)!;
        expect(last).toMatchObject({ cht_change_reason: issue, cht_reference_id: f.itemId, cht_old_value: String(silver.tierId), cht_new_value: null });
        expect(JSON.parse(last.cht_metadata!)).toMatchObject({ source, how: 'reconcile' });
      }
      // Agreed now.
      expect((await reconcile({ userId: f.userId })).drift).toEqual([]);
    },
  );

  it('a recovery lost while we hold the subscription on hold: active again with its tier back and the new period', async () => {
    const f = await subscriber(s);
    await s.set(f, 'on_hold', f.periodEnd);
    t.clock.set(new Date(at(31).getTime() + 3600_000));
    expect((await reconcile({ userId: f.userId })).applied).toBe(1);
    expect(await tierOf(f.userId)).toBeNull();

    // The member updated the payment method; the provider renewed, and that event was lost.
    await s.set(f, 'active', at(62));
    t.clock.set(at(33));
    const run = await reconcile({ userId: f.userId });
    expect(run).toEqual({
      checked: 1,
      drift: [{ order_item_id: f.itemId, source, ours: { status: 'on_hold', period_end: ts(f.periodEnd) }, provider: { status: 'active', state: expect.any(String), period_end: ts(at(62)) }, action: 'recovered' }],
      applied: 1,
      unreachable: [],
      dry_run: false,
    });
    expect(await itemFor(t, source, f.ref)).toMatchObject({ odi_subscription_status: 'active', odi_subscription_period_end: at(62), odi_subscription_grace_until: null });
    expect(await tierOf(f.userId)).toBe(silver.tierId);
    expect(await statusTrail(f.userId)).toEqual(['active>on_hold:on_hold', 'on_hold>active:recovered']);
    const last = (await changeRows(t, f.userId)).filter((r) => r.cht_field_name === 'tier_membership').at(-1)!;
    expect(last).toMatchObject({ cht_reference_id: f.itemId, cht_old_value: null, cht_new_value: String(silver.tierId) });
    expect(JSON.parse(last.cht_metadata!)).toMatchObject({ source, how: 'reconcile' });
    expect((await reconcile({ userId: f.userId })).drift).toEqual([]);
  });

  it('a provider that is down: nothing changes, and the report names the subscription it could not read', async () => {
    const f = await subscriber(s);
    await s.set(f, 'expired', f.periodEnd);
    t.clock.set(new Date(at(31).getTime() + 3600_000));
    const base = t.services.settings.string(s.baseSetting);
    await t.services.settings.set(s.baseSetting, 'http://127.0.0.1:9');
    try {
      const run = await reconcile({ userId: f.userId });
      expect(run).toEqual({ checked: 0, drift: [], applied: 0, unreachable: [{ order_item_id: f.itemId, source, error: expect.any(String) }], dry_run: false });
    } finally {
      await t.services.settings.set(s.baseSetting, base);
    }
    expect(await tierOf(f.userId)).toBe(silver.tierId);
    expect(await itemFor(t, source, f.ref)).toMatchObject({ odi_subscription_status: 'active', odi_subscription_period_end: f.periodEnd });
    // Back up: the same run repairs it.
    expect((await reconcile({ userId: f.userId })).applied).toBe(1);
    expect(await tierOf(f.userId)).toBeNull();
  });
});

describe('reconciliation: selection and order of events', () => {
  const card = SOURCES[0]!;

  it('--source reads only that source; a delivery of the lost expiry after the repair changes nothing more', async () => {
    const f = await subscriber(card);
    await card.set(f, 'expired', f.periodEnd);
    t.clock.set(new Date(at(31).getTime() + 3600_000));
    expect(await reconcile({ userId: f.userId, source: 'wallet_provider' })).toEqual({ checked: 0, drift: [], applied: 0, unreachable: [], dry_run: false });
    expect((await reconcile({ userId: f.userId, source: 'card_processor' })).applied).toBe(1);
    const rows = (await changeRows(t, f.userId)).length;
    // The provider's expiry event, delivered late (it happened at day 30, before the provider was read).
    const data = await ok(cardDriver.expiry(t, { ...f, at: at(30) }), 'card_processor');
    expect(data.outcomes).toEqual([{ outcome: 'stale', orderItemId: f.itemId }]);
    expect(await changeRows(t, f.userId)).toHaveLength(rows);
  });

  it('a renewal delivered while the provider is being read is not applied a second time', async () => {
    const f = await subscriber(card);
    await card.set(f, 'active', at(60));
    t.clock.set(new Date(at(31).getTime() + 3600_000));
    const deps = t.services.store.deps;
    const original = deps.cardProcessor;
    // The provider's renewal event arrives between our read of the subscription and the repair.
    deps.cardProcessor = (settings) => {
      const client = original(settings);
      return {
        ...client,
        getSubscription: async (id: string) => {
          const read = await client.getSubscription(id);
          await ok(cardDriver.renewal(t, { ...f, at: at(30), periodEnd: at(60) }), 'card_processor');
          return read;
        },
      };
    };
    try {
      const run = await reconcile({ userId: f.userId });
      expect(run.drift).toEqual([expect.objectContaining({ order_item_id: f.itemId, action: 'renewed' })]);
      expect(run.applied).toBe(0);
    } finally {
      deps.cardProcessor = original;
    }
    const renewals = (await changeRows(t, f.userId)).filter((r) => r.cht_change_reason === 'renewal');
    expect(renewals).toHaveLength(1);
    expect(JSON.parse(renewals[0]!.cht_metadata!).how).toBeUndefined();
    expect(await itemFor(t, 'card_processor', f.ref)).toMatchObject({ odi_subscription_status: 'active', odi_subscription_period_end: at(60) });
  });

  it('an expired subscription is read again for a while: a renewal that was lost after it ended gives the tier back', async () => {
    const f = await subscriber(card);
    await card.set(f, 'expired', f.periodEnd);
    t.clock.set(new Date(at(31).getTime() + 3600_000));
    await reconcile({ userId: f.userId });
    expect(await tierOf(f.userId)).toBeNull();
    await card.set(f, 'active', at(61));
    t.clock.set(at(32));
    const run = await reconcile({ userId: f.userId });
    expect(run.drift).toEqual([expect.objectContaining({ order_item_id: f.itemId, action: 'renewed', ours: { status: 'expired', period_end: ts(f.periodEnd) } })]);
    expect(await tierOf(f.userId)).toBe(silver.tierId);
    expect(await itemFor(t, 'card_processor', f.ref)).toMatchObject({ odi_subscription_status: 'active', odi_subscription_period_end: at(61) });
    // Long after it ended, an expired subscription is no longer read.
    await card.set(f, 'expired', at(61));
    t.clock.set(new Date(at(61).getTime() + 36 * DAY));
    await t.services.db.updateTable('odi_order_items').set({ odi_subscription_status: 'expired' }).where('odi_order_item_id', '=', f.itemId).execute();
    expect((await reconcile({ userId: f.userId })).checked).toBe(0);
  });
});

describe('reconciliation: the App Store Server API', () => {
  const iosSource = SOURCES[2]!;

  it('is asked with a bearer token signed by the in-app key; a refund (revoked) removes the tier', async () => {
    const f = await subscriber(iosSource);
    appStore.set(f.ref, {
      status: 5,
      transaction: { productId: f.providerProductId, expiresDate: f.periodEnd.getTime(), revocationDate: at(5).getTime(), revocationReason: 0 },
      renewal: { productId: f.providerProductId, autoRenewStatus: 0 },
    });
    t.clock.set(at(6));
    const calls = appStore.calls.length;
    const run = await reconcile({ userId: f.userId });
    expect(run.drift).toEqual([expect.objectContaining({ order_item_id: f.itemId, action: 'refunded', provider: expect.objectContaining({ status: 'refunded' }) })]);
    expect(run.applied).toBe(1);
    expect(await tierOf(f.userId)).toBeNull();
    expect(await itemFor(t, 'ios_store', f.ref)).toMatchObject({ odi_subscription_status: 'refunded' });
    const call = appStore.calls.slice(calls).find((c) => c.path === `/inApps/v1/subscriptions/${f.ref}`)!;
    const [header, claims] = String(call.headers.authorization).slice(7).split('.').slice(0, 2).map((p) => JSON.parse(Buffer.from(p, 'base64url').toString('utf8')));
    expect(header).toMatchObject({ alg: 'ES256', kid: inAppKey.keyId });
    expect(claims).toMatchObject({ iss: inAppKey.issuerId, aud: 'appstoreconnect-v1', bid: IOS_BUNDLE_ID });
  });

  it('an answer the App Store did not sign, or a key it refuses, changes nothing', async () => {
    const f = await subscriber(iosSource);
    await iosSource.set(f, 'expired', f.periodEnd);
    t.clock.set(new Date(at(31).getTime() + 3600_000));
    const trusted = appStore.chain;
    appStore.chain = makeAppleChain();
    try {
      expect(await reconcile({ userId: f.userId })).toEqual({ checked: 0, drift: [], applied: 0, unreachable: [{ order_item_id: f.itemId, source: 'ios_store', error: expect.any(String) }], dry_run: false });
    } finally {
      appStore.chain = trusted;
    }
    await t.services.settings.set('ios_store_api_key_id', 'OTHERKEY99');
    try {
      expect((await reconcile({ userId: f.userId })).unreachable).toEqual([{ order_item_id: f.itemId, source: 'ios_store', error: expect.any(String) }]);
    } finally {
      await t.services.settings.set('ios_store_api_key_id', inAppKey.keyId);
    }
    expect(await tierOf(f.userId)).toBe(silver.tierId);
    expect(await itemFor(t, 'ios_store', f.ref)).toMatchObject({ odi_subscription_status: 'active' });
  });
});
