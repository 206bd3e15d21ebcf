import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storeAccountToken } from '../../src/store/accounts.js';
import { processPeriodEnds } from '../../src/store/lifecycle/period-end.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { androidDriver } from '../helpers/providers/android-driver.js';
import { cardDriver } from '../helpers/providers/card-driver.js';
import { iosDriver } from '../helpers/providers/ios-driver.js';
import { signWallet, walletDriver } from '../helpers/providers/wallet-driver.js';
import { PROVIDER_T0, createProduct, itemFor, postWebhook, providerDay, tierOf as tierOfUser, setStoreActive, uniqueRef, type Delivery, type ProviderFact, type SourceDriver } from '../helpers/store.js';
import { createTier, type TestTier } from '../helpers/tiers.js';

/**
 * DESIGN 14's provider flows, each through the webhook endpoint as the provider calls a deployment, in
 * the provider's own message shapes, signed as the provider signs them, and with every provider endpoint
 * (certificate host, OIDC certificates, token endpoints, APIs) pointed at a fake by settings alone.
 */
const wallet = walletDriver();
const android = androidDriver();
const ios = iosDriver();
const DRIVERS: SourceDriver[] = [cardDriver, wallet, ios, android];

let t: TestApp;
let silver: TestTier;
let gold: TestTier;
beforeAll(async () => {
  t = await createTestApp();
  await setStoreActive(t, true);
  silver = await createTier(t, { name: 'silver', level: 20 });
  gold = await createTier(t, { name: 'gold', level: 30 });
  for (const d of DRIVERS) await d.setup(t);
});
afterAll(async () => {
  for (const d of DRIVERS) await d.teardown();
  await t.close();
});

const at = providerDay;
const tierOf = (userId: number) => tierOfUser(t, userId);

async function ok(source: string, delivery: Delivery | Promise<Delivery>) {
  const res = await postWebhook(t, source, await delivery);
  expect(res.statusCode, res.body).toBe(200);
  return res.json.data;
}

/** A member with an API key (for the summary), and a product of `tier` sold at the source. */
async function member() {
  const { headers, userId } = await t.keyHeaders();
  return { headers, userId };
}
async function product(d: SourceDriver, tier: TestTier, price: number, name = uniqueRef('plan-')) {
  const providerProductId = uniqueRef(`${d.source}-`);
  const productId = await createProduct(t, { tierId: tier.tierId, refs: { [d.productColumn]: providerProductId }, price, name });
  return { productId, providerProductId, name };
}
const summary = async (headers: Record<string, string>) => (await t.request({ method: 'POST', url: '/api/v1/action/subscription_summary', headers, payload: {} })).json.data;

/** Runs the period-end task at `when`, then puts the clock back. */
async function periodEndAt(when: Date) {
  const before = t.clock.now();
  t.clock.set(when);
  try {
    return await processPeriodEnds(t.services.db, t.clock, t.services.settings);
  } finally {
    t.clock.set(before);
  }
}

describe('App Store renewal preference changes (DID_CHANGE_RENEWAL_PREF)', () => {
  it('UPGRADE takes effect at once: the tier through the grant path, the new product and price on the order item', async () => {
    const m = await member();
    const low = await product(ios, silver, 999);
    const high = await product(ios, gold, 1999, uniqueRef('Gold yearly '));
    const f: ProviderFact = { userId: m.userId, ...low, ref: uniqueRef('2000'), at: at(0), periodEnd: at(30) };
    await ok('ios_store', ios.notify(t, f, 'SUBSCRIBED', 'INITIAL_BUY', undefined, { price: 9990 }));
    expect(await tierOf(m.userId)).toBe(silver.tierId);

    // Apple: the upgrade starts a new period of the higher product now; the transaction is the new product's
    const data = await ok('ios_store', ios.notify(t, { ...f, ...high, at: at(5), periodEnd: at(35) }, 'DID_CHANGE_RENEWAL_PREF', 'UPGRADE', undefined, { price: 19990 }));
    expect(data).toMatchObject({ processed: true, outcomes: [{ outcome: 'granted', grant: 'moved' }] });
    expect(await tierOf(m.userId)).toBe(gold.tierId);
    const item = (await itemFor(t, 'ios_store', f.ref))!;
    expect(Number(item.odi_pro_product_id)).toBe(high.productId);
    expect(Number(item.odi_price)).toBe(1999);
    expect(item.odi_subscription_period_end!.toISOString()).toBe(at(35).toISOString());
    const s = await summary(m.headers);
    expect(s.subscriptions).toEqual([expect.objectContaining({ order_item_id: Number(item.odi_order_item_id), name: high.name, price: 1999, status: 'active' })]);
    expect(s.current_tier.name).toBe('gold');
  });

  it('DOWNGRADE changes only what renews; the renewal with the lower product then moves the tier and the plan', async () => {
    const m = await member();
    const high = await product(ios, gold, 1999);
    const low = await product(ios, silver, 999, uniqueRef('Silver monthly '));
    const f: ProviderFact = { userId: m.userId, ...high, ref: uniqueRef('2100'), at: at(0), periodEnd: at(30) };
    await ok('ios_store', ios.notify(t, f, 'SUBSCRIBED', 'INITIAL_BUY', undefined, { price: 19990 }));

    const data = await ok('ios_store', ios.notify(t, { ...f, at: at(5) }, 'DID_CHANGE_RENEWAL_PREF', 'DOWNGRADE', undefined, { autoRenewProductId: low.providerProductId }));
    expect(data.outcomes).toEqual([expect.objectContaining({ outcome: 'renewal_product_changed', productId: low.productId })]);
    expect(await tierOf(m.userId)).toBe(gold.tierId);
    const item = (await itemFor(t, 'ios_store', f.ref))!;
    expect(Number(item.odi_pro_product_id)).toBe(high.productId);
    expect(Number(item.odi_price)).toBe(1999);
    expect((await summary(m.headers)).subscriptions[0].scheduled_change).toMatchObject({ kind: 'downgrade', product_id: low.productId, tier_name: 'silver' });

    // the period-end task leaves a store's downgrade to the store's renewal
    expect(await periodEndAt(at(31))).toMatchObject({ downgraded: 0 });
    expect(await tierOf(m.userId)).toBe(gold.tierId);

    await ok('ios_store', ios.notify(t, { ...f, ...low, at: at(30), periodEnd: at(60) }, 'DID_RENEW', undefined, undefined, { price: 9990 }));
    expect(await tierOf(m.userId)).toBe(silver.tierId);
    const renewed = (await itemFor(t, 'ios_store', f.ref))!;
    expect(Number(renewed.odi_pro_product_id)).toBe(low.productId);
    expect(Number(renewed.odi_price)).toBe(999);
    expect(renewed.odi_scheduled_pro_product_id).toBeNull();
    expect((await summary(m.headers)).subscriptions).toEqual([expect.objectContaining({ name: low.name, price: 999, scheduled_change: null })]);
  });

  it('a downgrade undone (no subtype, the current product renews again) clears what was scheduled', async () => {
    const m = await member();
    const high = await product(ios, gold, 1999);
    const low = await product(ios, silver, 999);
    const f: ProviderFact = { userId: m.userId, ...high, ref: uniqueRef('2200'), at: at(0), periodEnd: at(30) };
    await ok('ios_store', ios.notify(t, f, 'SUBSCRIBED', 'INITIAL_BUY'));
    await ok('ios_store', ios.notify(t, { ...f, at: at(5) }, 'DID_CHANGE_RENEWAL_PREF', 'DOWNGRADE', undefined, { autoRenewProductId: low.providerProductId }));
    await ok('ios_store', ios.notify(t, { ...f, at: at(6) }, 'DID_CHANGE_RENEWAL_PREF'));
    expect((await itemFor(t, 'ios_store', f.ref))!.odi_scheduled_pro_product_id).toBeNull();
    expect(await tierOf(m.userId)).toBe(gold.tierId);
  });
});

describe.each([ios, android])('$source renews with another product', (d) => {
  it('the order item gets the product and price now paid for, so the summary names the new plan', async () => {
    const m = await member();
    const first = await product(d, silver, 999);
    const next = await product(d, gold, 1499, uniqueRef('Gold plan '));
    const f: ProviderFact = { userId: m.userId, ...first, ref: uniqueRef('r'), at: at(0), periodEnd: at(30) };
    await ok(d.source, d.purchase(t, f));
    await ok(d.source, d.renewal(t, { ...f, ...next, at: at(30), periodEnd: at(60) }));
    const item = (await itemFor(t, d.source, f.ref))!;
    expect(Number(item.odi_pro_product_id)).toBe(next.productId);
    // the App Store states the price it charged (14.99); Play states none, so the product's price
    expect(Number(item.odi_price)).toBe(1499);
    expect(await tierOf(m.userId)).toBe(gold.tierId);
    expect((await summary(m.headers)).subscriptions).toEqual([expect.objectContaining({ order_item_id: Number(item.odi_order_item_id), name: next.name, price: 1499 })]);
  });
});

describe('Play plan changes (a purchase whose linkedPurchaseToken names our subscription)', () => {
  it.each([
    ['an upgrade', 'silver', 'gold'],
    ['a downgrade', 'gold', 'silver'],
  ] as const)('%s takes effect now: the same order item goes on under the new token with the new product', async (_what, fromName, toName) => {
    const [fromTier, toTier] = [fromName, toName].map((n) => (n === 'gold' ? gold : silver)) as [TestTier, TestTier];
    const m = await member();
    const from = await product(android, fromTier, 1000);
    const to = await product(android, toTier, 2000, uniqueRef('Play plan '));
    const f: ProviderFact = { userId: m.userId, ...from, ref: uniqueRef('play-old-'), at: at(0), periodEnd: at(30) };
    await ok('android_store', android.purchase(t, f));
    const before = (await itemFor(t, 'android_store', f.ref))!;

    const g: ProviderFact = { ...f, ...to, ref: uniqueRef('play-new-'), at: at(10), periodEnd: at(40) };
    const push = await android.purchase(t, g);
    // Play's subscriptionsv2 resource of the new purchase names the one it replaces
    android.play.subscriptions.get(g.ref)!.linkedPurchaseToken = f.ref;
    const data = await ok('android_store', push);
    expect(data.outcomes).toEqual([expect.objectContaining({ outcome: 'granted', orderItemId: Number(before.odi_order_item_id), grant: 'moved' })]);
    expect(await tierOf(m.userId)).toBe(toTier.tierId);
    expect(await itemFor(t, 'android_store', f.ref)).toBeUndefined();
    const item = (await itemFor(t, 'android_store', g.ref))!;
    expect(Number(item.odi_order_item_id)).toBe(Number(before.odi_order_item_id));
    expect(Number(item.odi_pro_product_id)).toBe(to.productId);
    expect(Number(item.odi_price)).toBe(2000);
    expect(item.odi_subscription_status).toBe('active');
    expect((await summary(m.headers)).subscriptions).toEqual([expect.objectContaining({ name: to.name, price: 2000 })]);
  });
});

/** Each source's own message for "the member cancelled at the provider". */
const providerCancel: Record<string, (f: ProviderFact) => Promise<Delivery>> = {
  card_processor: (f) => cardDriver.cancelScheduled(t, f),
  ios_store: (f) => ios.cancelScheduled(t, f),
  android_store: (f) => android.cancelScheduled(t, f),
  // PayPal: the member cancelled in their PayPal account
  wallet_provider: async (f) => {
    const sub = wallet.fake.subscriptions.get(f.ref)!;
    sub.status = 'CANCELLED';
    const resource = { id: f.ref, status: 'CANCELLED', plan_id: f.providerProductId, custom_id: await storeAccountToken(t.services.db, f.userId), status_update_time: f.at.toISOString(), billing_info: {} };
    const body = JSON.stringify({ id: uniqueRef('WH-'), event_type: 'BILLING.SUBSCRIPTION.CANCELLED', resource_type: 'subscription', create_time: f.at.toISOString(), resource });
    return signWallet(body, { key: wallet.cert, time: t.clock.now(), certBase: wallet.fake.base });
  },
};

describe.each(DRIVERS)('a cancellation made at $source', (d) => {
  it('marks the subscription cancelled and keeps the tier to the paid period end; the period end then removes it', async () => {
    const m = await member();
    const p = await product(d, silver, 1500);
    const periodEnd = new Date(t.clock.nowMs() + 20 * 86_400_000);
    const f: ProviderFact = { userId: m.userId, ...p, ref: uniqueRef('c'), at: at(0), periodEnd };
    await ok(d.source, d.purchase(t, f));
    // the purchase names no period end for some sources: the paid period is the one recorded
    await t.services.db.updateTable('odi_order_items').set({ odi_subscription_period_end: periodEnd }).where('odi_subscription_reference', '=', f.ref).execute();

    const data = await ok(d.source, providerCancel[d.source]!({ ...f, at: at(2) }));
    expect(data.outcomes).toEqual([expect.objectContaining({ outcome: 'status_changed', status: 'cancelled' })]);
    const item = (await itemFor(t, d.source, f.ref))!;
    expect(item.odi_subscription_status).toBe('cancelled');
    expect(item.odi_subscription_period_end!.toISOString()).toBe(periodEnd.toISOString());
    expect(await tierOf(m.userId)).toBe(silver.tierId);
    expect((await summary(m.headers)).subscriptions).toEqual([expect.objectContaining({ status: 'cancelled', can_cancel: false })]);

    expect(await periodEndAt(new Date(periodEnd.getTime() - 1000))).toMatchObject({ expired: 0 });
    expect(await tierOf(m.userId)).toBe(silver.tierId);
    expect(await periodEndAt(periodEnd)).toMatchObject({ expired: 1, provider_errors: 0 });
    expect((await itemFor(t, d.source, f.ref))!.odi_subscription_status).toBe('expired');
    expect(await tierOf(m.userId)).toBeNull();
  });
});

describe('PayPal refunds in PayPal’s own shapes', () => {
  const plan = () => product(wallet, silver, 1500);
  const send = (type: string, resource: Record<string, unknown>, create = t.clock.now()) =>
    ok('wallet_provider', signWallet(JSON.stringify({ id: uniqueRef('WH-'), event_type: type, resource_type: type.startsWith('PAYMENT.CAPTURE') ? 'refund' : 'sale', create_time: create.toISOString(), resource }), { key: wallet.cert, time: t.clock.now(), certBase: wallet.fake.base }));

  async function subscribed() {
    const m = await member();
    const p = await plan();
    const f: ProviderFact = { userId: m.userId, ...p, ref: uniqueRef('I-'), at: at(0), periodEnd: at(30) };
    await ok('wallet_provider', wallet.purchase(t, f));
    return { m, f };
  }

  it('PAYMENT.SALE.REFUNDED naming sale_id and parent_payment (no agreement id) of a renewal we recorded removes the tier', async () => {
    const { m, f } = await subscribed();
    const saleId = uniqueRef('8H');
    // the renewal's sale, as PayPal sends it (PAYMENT.SALE.COMPLETED names the agreement)
    await send('PAYMENT.SALE.COMPLETED', { id: saleId, state: 'completed', billing_agreement_id: f.ref, amount: { total: '15.00', currency: 'USD' }, create_time: at(30).toISOString() }, at(30));
    const data = await send(
      'PAYMENT.SALE.REFUNDED',
      {
        id: uniqueRef('REF'),
        state: 'completed',
        amount: { total: '15.00', currency: 'USD' },
        sale_id: saleId,
        parent_payment: uniqueRef('PAY-'),
        total_refunded_amount: { value: '15.00', currency: 'USD' },
        create_time: at(31).toISOString(),
        update_time: at(31).toISOString(),
        links: [{ href: `https://api.paypal.com/v1/payments/sale/${saleId}`, rel: 'sale', method: 'GET' }],
      },
      at(31),
    );
    expect(data).toMatchObject({ processed: true, outcomes: [{ outcome: 'removed' }] });
    expect(await tierOf(m.userId)).toBeNull();
    const item = (await itemFor(t, 'wallet_provider', f.ref))!;
    expect(item.odi_subscription_status).toBe('refunded');
    expect(Number(item.odi_refund_amount)).toBe(1500);
  });

  it('an older sample with a negative total, of a sale we never saw: resolved through the provider’s sale API', async () => {
    const { m, f } = await subscribed();
    const saleId = uniqueRef('9T');
    wallet.fake.sales.set(saleId, { id: saleId, state: 'refunded', billing_agreement_id: f.ref, amount: { total: '15.00', currency: 'USD' } });
    const data = await send('PAYMENT.SALE.REFUNDED', { id: uniqueRef('6Y'), state: 'completed', amount: { total: '-15.00', currency: 'USD' }, sale_id: saleId, parent_payment: uniqueRef('PAY-'), create_time: at(3).toISOString() }, at(3));
    expect(data.outcomes).toEqual([expect.objectContaining({ outcome: 'removed' })]);
    expect(wallet.fake.callsTo('GET', `/v1/payments/sale/${saleId}`)).toHaveLength(1);
    expect(await tierOf(m.userId)).toBeNull();
    expect(Number((await itemFor(t, 'wallet_provider', f.ref))!.odi_refund_amount)).toBe(1500);
  });

  it('PAYMENT.CAPTURE.REFUNDED of part of a capture is recorded and removes nothing', async () => {
    const { m, f } = await subscribed();
    const captureId = uniqueRef('0JF');
    wallet.fake.sales.set(captureId, { id: captureId, state: 'partially_refunded', billing_agreement_id: f.ref, amount: { total: '15.00', currency: 'USD' } });
    const data = await send('PAYMENT.CAPTURE.REFUNDED', {
      id: uniqueRef('1Y'),
      status: 'COMPLETED',
      amount: { currency_code: 'USD', value: '5.00' },
      create_time: at(4).toISOString(),
      update_time: at(4).toISOString(),
      links: [
        { href: `https://api.paypal.com/v2/payments/refunds/${uniqueRef('1Y')}`, rel: 'self', method: 'GET' },
        { href: `https://api.paypal.com/v2/payments/captures/${captureId}`, rel: 'up', method: 'GET' },
      ],
    }, at(4));
    expect(data.outcomes).toEqual([expect.objectContaining({ outcome: 'refund_recorded', amount: 500 })]);
    expect(await tierOf(m.userId)).toBe(silver.tierId);
    expect((await itemFor(t, 'wallet_provider', f.ref))!.odi_subscription_status).toBe('active');
  });
});

describe('a lower-tier subscription whose grant was skipped (upgrade-only)', () => {
  it('bears no tier: its expiry leaves the tier a live higher subscription holds', async () => {
    const m = await member();
    const high = await product(ios, gold, 1999);
    const low = await product(ios, silver, 999);
    const g: ProviderFact = { userId: m.userId, ...high, ref: uniqueRef('3000'), at: at(0), periodEnd: at(30) };
    const s: ProviderFact = { userId: m.userId, ...low, ref: uniqueRef('3100'), at: at(1), periodEnd: at(31) };
    await ok('ios_store', ios.purchase(t, g));
    const bought = await ok('ios_store', ios.purchase(t, s));
    expect(bought.outcomes).toEqual([expect.objectContaining({ outcome: 'granted', grant: 'skipped_lower_level' })]);
    expect((await itemFor(t, 'ios_store', s.ref))!.odi_tier_skipped_time).not.toBeNull();

    const ended = await ok('ios_store', ios.expiry(t, { ...s, at: at(31) }));
    expect(ended.outcomes).toEqual([expect.objectContaining({ outcome: 'not_tier_bearing' })]);
    expect(await tierOf(m.userId)).toBe(gold.tierId);
    expect((await itemFor(t, 'ios_store', g.ref))!.odi_subscription_status).toBe('active');
  });

  it('bears no tier: its grace ending in a hold (period-end task) leaves a higher tier assigned by staff', async () => {
    const m = await member();
    await t.services.tiers.membership.assignManually(m.userId, gold.tierId, null);
    const low = await product(ios, silver, 999);
    const s: ProviderFact = { userId: m.userId, ...low, ref: uniqueRef('3200'), at: at(0), periodEnd: at(30) };
    const bought = await ok('ios_store', ios.purchase(t, s));
    expect(bought.outcomes).toEqual([expect.objectContaining({ outcome: 'granted', grant: 'skipped_lower_level' })]);
    await ok('ios_store', ios.notify(t, { ...s, at: at(30) }, 'DID_FAIL_TO_RENEW', 'GRACE_PERIOD', undefined, { renewal: { gracePeriodExpiresDate: at(46).getTime(), isInBillingRetryPeriod: true } }));
    expect((await itemFor(t, 'ios_store', s.ref))!.odi_subscription_status).toBe('in_grace');

    expect(await periodEndAt(at(47))).toMatchObject({ grace_ended: 1 });
    expect((await itemFor(t, 'ios_store', s.ref))!.odi_subscription_status).toBe('on_hold');
    expect(await tierOf(m.userId)).toBe(gold.tierId);
  });
});

describe('a provider API token refused with 401', () => {
  it('wallet: the OAuth token is fetched again once and the call retried; a second 401 is an error', async () => {
    const m = await member();
    const p = await product(wallet, silver, 1500);
    const f: ProviderFact = { userId: m.userId, ...p, ref: uniqueRef('I-'), at: at(0), periodEnd: at(30) };
    await ok('wallet_provider', wallet.purchase(t, f));
    await ok('wallet_provider', wallet.renewal(t, { ...f, at: at(30), periodEnd: at(60) }));
    const tokensBefore = wallet.fake.issued.length;

    wallet.fake.revokeTokens();
    const renewed = await ok('wallet_provider', wallet.renewal(t, { ...f, at: at(60), periodEnd: at(90) }));
    expect(renewed.outcomes).toEqual([expect.objectContaining({ outcome: 'granted' })]);
    expect(wallet.fake.issued.length).toBe(tokensBefore + 1);
    expect((await itemFor(t, 'wallet_provider', f.ref))!.odi_subscription_period_end!.toISOString()).toBe(at(90).toISOString());

    wallet.fake.revokeTokens();
    wallet.fake.issueDeadTokens = true;
    try {
      const gets = wallet.fake.callsTo('GET', `/v1/billing/subscriptions/${f.ref}`).length;
      const res = await postWebhook(t, 'wallet_provider', await wallet.renewal(t, { ...f, at: at(90), periodEnd: at(120) }));
      expect(res.statusCode).toBe(500);
      expect(res.json.errortype).toBe('TransactionError');
      expect(wallet.fake.callsTo('GET', `/v1/billing/subscriptions/${f.ref}`).length).toBe(gets + 2);
      expect((await itemFor(t, 'wallet_provider', f.ref))!.odi_subscription_period_end!.toISOString()).toBe(at(90).toISOString());
    } finally {
      wallet.fake.issueDeadTokens = false;
    }
  });

  it('Play: the service account token is fetched again once from android_store_token_url and the read retried; a second 401 is an error', async () => {
    const m = await member();
    const p = await product(android, silver, 1500);
    const f: ProviderFact = { userId: m.userId, ...p, ref: uniqueRef('play-'), at: at(0), periodEnd: at(30) };
    await ok('android_store', android.purchase(t, f));
    const tokensBefore = android.play.issued.length;

    android.play.revokeTokens();
    await ok('android_store', android.renewal(t, { ...f, at: at(30), periodEnd: at(60) }));
    expect(android.play.issued.length).toBe(tokensBefore + 1);
    expect((await itemFor(t, 'android_store', f.ref))!.odi_subscription_period_end!.toISOString()).toBe(at(60).toISOString());

    android.play.revokeTokens();
    android.play.issueDeadTokens = true;
    try {
      const reads = android.play.callsTo('GET', '/androidpublisher/').length;
      const res = await postWebhook(t, 'android_store', await android.renewal(t, { ...f, at: at(60), periodEnd: at(90) }));
      expect(res.statusCode).toBe(500);
      expect(android.play.callsTo('GET', '/androidpublisher/').length).toBe(reads + 2);
      expect((await itemFor(t, 'android_store', f.ref))!.odi_subscription_period_end!.toISOString()).toBe(at(60).toISOString());
    } finally {
      android.play.issueDeadTokens = false;
    }
  });
});

describe('test authorities by settings alone', () => {
  it('the wallet certificate host: the provider’s domain by default, a listed origin only when set', async () => {
    const m = await member();
    const p = await product(wallet, silver, 1500);
    const f: ProviderFact = { userId: m.userId, ...p, ref: uniqueRef('I-'), at: at(0), periodEnd: at(30) };
    await t.services.settings.set('wallet_provider_cert_hosts', 'paypal.com');
    try {
      const refused = await postWebhook(t, 'wallet_provider', await wallet.purchase(t, f));
      expect(refused.statusCode).toBe(401);
      expect(refused.json.error).toBe('Wallet provider certificate is not on the provider domain');
    } finally {
      await t.services.settings.set('wallet_provider_cert_hosts', `paypal.com, ${wallet.fake.base}`);
    }
    await ok('wallet_provider', wallet.purchase(t, f));
    expect(await tierOf(m.userId)).toBe(silver.tierId);
  });

  it('the push-token certificates come from android_store_oidc_certs_url: a token signed by a key not published there is refused', async () => {
    const m = await member();
    const p = await product(android, silver, 1500);
    const f: ProviderFact = { userId: m.userId, ...p, ref: uniqueRef('play-'), at: at(0), periodEnd: at(30) };
    const published = android.play.certs;
    // the same key id now published with another key's certificate
    android.play.certs = { [android.key.kid]: (await import('../helpers/providers/google-oidc-signer.js')).makeOidcKey(android.key.kid).cert.pem };
    try {
      expect((await postWebhook(t, 'android_store', await android.purchase(t, f))).statusCode).toBe(401);
    } finally {
      android.play.certs = published;
    }
    await ok('android_store', android.purchase(t, f));
    expect(await tierOf(m.userId)).toBe(silver.tierId);
    expect(android.play.callsTo('GET', '/oauth2/v1/certs').length).toBeGreaterThanOrEqual(2);
  });
});
