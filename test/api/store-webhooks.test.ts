import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { ANDROID_AUDIENCE, ANDROID_PUSH_EMAIL, androidDriver } from '../helpers/providers/android-driver.js';
import { signOidcToken } from '../helpers/providers/google-oidc-signer.js';
import { cardDriver } from '../helpers/providers/card-driver.js';
import { makeAppleLeaf } from '../helpers/providers/apple-signer.js';
import { iosDriver, type IosDriver } from '../helpers/providers/ios-driver.js';
import { downUrl } from '../helpers/providers/fake-ocsp.js';
import rs from 'jsrsasign';
import { WALLET_CERT_PATH, signWallet, walletDriver } from '../helpers/providers/wallet-driver.js';
import { PROVIDER_T0, createProduct, itemFor, postWebhook, providerDay, tierOf as tierOfUser, setStoreActive, uniqueRef, webhookLogs, type ProviderFact, type SourceDriver } from '../helpers/store.js';
import { changeRows, createTier, tierMemberships, type TestTier } from '../helpers/tiers.js';

const wallet = walletDriver();
const android = androidDriver();
const DRIVERS: SourceDriver[] = [cardDriver, wallet, iosDriver(), android];

let t: TestApp;
let basic: TestTier;
let silver: TestTier;
let gold: TestTier;
beforeAll(async () => {
  t = await createTestApp();
  await setStoreActive(t, true);
  basic = await createTier(t, { name: 'basic', level: 10 });
  silver = await createTier(t, { name: 'silver', level: 20 });
  gold = await createTier(t, { name: 'gold', level: 30 });
  for (const d of DRIVERS) await d.setup(t);
});
afterAll(async () => {
  for (const d of DRIVERS) await d.teardown();
  await t.close();
});

const at = providerDay;
const T0 = PROVIDER_T0;
const tierOf = (userId: number) => tierOfUser(t, userId);
const serialOf = (cert: { pem: string }) => new rs.X509(cert.pem).getSerialNumberHex();

describe.each(DRIVERS)('webhooks from $source', (d) => {
  const productFor = async (tier: TestTier | null) => {
    const providerProductId = uniqueRef(`${d.source}-product-`);
    const productId = await createProduct(t, { tierId: tier?.tierId ?? null, refs: { [d.productColumn]: providerProductId } });
    return { productId, providerProductId };
  };
  const fact = async (tier: TestTier | null, o: Partial<ProviderFact> = {}): Promise<ProviderFact> => {
    const userId = o.userId ?? (await t.createUser()).userId;
    const p = await productFor(tier);
    return { userId, ...p, ref: uniqueRef('sub'), at: at(0), periodEnd: at(30), ...o };
  };
  const send = async (delivery: Promise<import('../helpers/store.js').Delivery>) => postWebhook(t, d.source, await delivery);
  const ok = async (delivery: Promise<import('../helpers/store.js').Delivery>) => {
    const res = await send(delivery);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json.api_version).toBe('1.0');
    return res.json.data;
  };

  it('a purchase grants the product tier, records the order item with its source, and tracks the change naming the source', async () => {
    const f = await fact(silver);
    const data = await ok(d.purchase(t, f));
    expect(data).toMatchObject({ duplicate: false, processed: true, outcomes: [{ outcome: 'granted', grant: 'joined' }] });
    expect(await tierOf(f.userId)).toBe(silver.tierId);
    const item = await itemFor(t, d.source, f.ref);
    expect(item).toMatchObject({ odi_usr_user_id: f.userId, odi_pro_product_id: f.productId, odi_subscription_status: 'active', odi_payment_source: d.source });
    expect(Number(item!.odi_price)).toBeGreaterThan(0);
    const order = await t.services.db.selectFrom('ord_orders').selectAll().where('ord_order_id', '=', item!.odi_ord_order_id).executeTakeFirstOrThrow();
    expect(order).toMatchObject({ ord_status: 2, ord_payment_source: d.source, ord_usr_user_id: f.userId });
    const changes = await changeRows(t, f.userId);
    expect(changes).toHaveLength(1);
    expect(changes[0]).toMatchObject({ cht_change_reason: 'purchase', cht_reference_type: 'order_item', cht_reference_id: item!.odi_order_item_id, cht_new_value: String(silver.tierId) });
    expect(JSON.parse(changes[0]!.cht_metadata!).source).toBe(d.source);
    const logs = (await webhookLogs(t, d.source)).filter((l) => l.wbh_event_id === data.event_id);
    expect(logs).toHaveLength(1);
    expect(logs[0]).toMatchObject({ wbh_processed: true, wbh_error_message: null, wbh_event_type: data.event_type });
  });

  it('a renewal keeps the tier and moves the period end', async () => {
    const f = await fact(silver);
    await ok(d.purchase(t, f));
    const data = await ok(d.renewal(t, { ...f, at: at(30), periodEnd: at(60) }));
    expect(data.outcomes).toEqual([expect.objectContaining({ outcome: 'granted', grant: 'renewed' })]);
    expect(await tierOf(f.userId)).toBe(silver.tierId);
    const item = await itemFor(t, d.source, f.ref);
    expect(item!.odi_subscription_period_end).toEqual(at(60));
    expect(item!.odi_last_event_time).toEqual(at(30));
    const changes = await changeRows(t, f.userId);
    expect(changes.map((c) => c.cht_change_reason)).toEqual(['purchase', 'renewal']);
    expect(JSON.parse(changes[1]!.cht_metadata!).source).toBe(d.source);
  });

  it('an expiry removes the user from all tiers', async () => {
    const f = await fact(gold);
    await ok(d.purchase(t, f));
    const data = await ok(d.expiry(t, { ...f, at: at(31) }));
    expect(data.outcomes).toEqual([expect.objectContaining({ outcome: 'removed', removedTierIds: [gold.tierId] })]);
    expect(await tierOf(f.userId)).toBeNull();
    expect((await itemFor(t, d.source, f.ref))!.odi_subscription_status).toBe('expired');
    const last = (await changeRows(t, f.userId)).at(-1)!;
    expect(last).toMatchObject({ cht_change_reason: expect.stringMatching(/^(expiry|cancellation)$/), cht_old_value: String(gold.tierId), cht_new_value: null });
    expect(JSON.parse(last.cht_metadata!).source).toBe(d.source);
  });

  it('a refund removes the user from all tiers and marks the subscription refunded', async () => {
    const f = await fact(gold);
    await ok(d.purchase(t, f));
    const data = await ok(d.refund(t, { ...f, at: at(2) }));
    expect(data.outcomes).toEqual([expect.objectContaining({ outcome: 'removed' })]);
    expect(await tierOf(f.userId)).toBeNull();
    expect((await itemFor(t, d.source, f.ref))!.odi_subscription_status).toBe('refunded');
    const last = (await changeRows(t, f.userId)).at(-1)!;
    expect(last.cht_change_reason).toBe('refund');
    expect(JSON.parse(last.cht_metadata!).source).toBe(d.source);
  });

  it('a lower-tier purchase is skipped (upgrade-only) and the skip is tracked', async () => {
    const high = await fact(gold);
    await ok(d.purchase(t, high));
    const low = await fact(basic, { userId: high.userId });
    const data = await ok(d.purchase(t, { ...low, at: at(1) }));
    expect(data.outcomes).toEqual([expect.objectContaining({ outcome: 'granted', grant: 'skipped_lower_level' })]);
    expect(await tierOf(high.userId)).toBe(gold.tierId);
    expect((await changeRows(t, high.userId)).at(-1)!.cht_change_reason).toBe('purchase_skipped_lower_level');
  });

  it('an equal-or-higher purchase moves the user, and the superseded subscription is marked replaced', async () => {
    const low = await fact(basic);
    await ok(d.purchase(t, low));
    const high = await fact(gold, { userId: low.userId });
    const data = await ok(d.purchase(t, { ...high, at: at(1) }));
    expect(data.outcomes).toEqual([expect.objectContaining({ outcome: 'granted', grant: 'moved' })]);
    expect(await tierOf(low.userId)).toBe(gold.tierId);
    expect((await itemFor(t, d.source, low.ref))!.odi_subscription_status).toBe('replaced');
    // The superseded subscription ending later does not take the new tier away.
    const later = await ok(d.expiry(t, { ...low, at: at(2) }));
    expect(later.outcomes).toEqual([expect.objectContaining({ outcome: 'not_tier_bearing' })]);
    expect(await tierOf(low.userId)).toBe(gold.tierId);
  });

  it('a scheduled cancellation keeps the tier until expiry; undoing it makes the subscription active again', async () => {
    const f = await fact(silver);
    await ok(d.purchase(t, f));
    await ok(d.cancelScheduled(t, { ...f, at: at(3) }));
    expect(await tierOf(f.userId)).toBe(silver.tierId);
    expect(await itemFor(t, d.source, f.ref)).toMatchObject({ odi_subscription_status: 'cancelled', odi_subscription_cancel_at_period_end: true });
    expect((await tierMemberships(t, f.userId))[0]!.grm_subscription_status).toBe('cancelled');
    await ok(d.cancelUndone(t, { ...f, at: at(4) }));
    expect(await itemFor(t, d.source, f.ref)).toMatchObject({ odi_subscription_status: 'active', odi_subscription_cancel_at_period_end: false });
    expect((await tierMemberships(t, f.userId))[0]!.grm_subscription_status).toBe('active');
  });

  describe('refused deliveries change nothing', () => {
    for (const [name, make, status] of [
      ['a bad signature', 'badSignature', 401],
      ['an expired timestamp', 'expired', 401],
      ['a tampered body', 'tampered', 401],
      ['a missing signature', 'unsigned', 400],
    ] as const) {
      it(`${name} is ${status} AuthenticationError`, async () => {
        const f = await fact(gold);
        const before = (await webhookLogs(t, d.source)).length;
        const res = await send(d[make](t, f));
        expect(res.statusCode, res.body).toBe(status);
        expect(res.json).toMatchObject({ api_version: '1.0', errortype: 'AuthenticationError' });
        expect(await webhookLogs(t, d.source)).toHaveLength(before);
        expect(await tierOf(f.userId)).toBeNull();
        expect(await tierOf(f.userId + 1)).toBeNull();
        expect(await itemFor(t, d.source, f.ref)).toBeUndefined();
      });
    }
  });

  it('a duplicate delivery is answered 200 and changes nothing', async () => {
    const f = await fact(silver);
    const delivery = await d.purchase(t, f);
    await postWebhook(t, d.source, delivery);
    const changes = await changeRows(t, f.userId);
    const res = await postWebhook(t, d.source, delivery);
    expect(res.statusCode).toBe(200);
    expect(res.json.data).toMatchObject({ duplicate: true, processed: false, outcomes: [] });
    expect(await changeRows(t, f.userId)).toEqual(changes);
    const items = await t.services.db.selectFrom('odi_order_items').select('odi_order_item_id').where('odi_usr_user_id', '=', f.userId).execute();
    expect(items).toHaveLength(1);
  });

  it('a stale expiry delivered after a later renewal changes nothing', async () => {
    const f = await fact(silver);
    await ok(d.purchase(t, f));
    await ok(d.renewal(t, { ...f, at: at(30), periodEnd: at(60) }));
    const data = await ok(d.expiry(t, { ...f, at: at(29) }));
    expect(data.outcomes).toEqual([expect.objectContaining({ outcome: 'stale' })]);
    expect(await tierOf(f.userId)).toBe(silver.tierId);
    expect(await itemFor(t, d.source, f.ref)).toMatchObject({ odi_subscription_status: 'active', odi_subscription_period_end: at(60) });
  });

  it('20 concurrent deliveries of the same event apply once', async () => {
    const f = await fact(gold);
    const delivery = await d.purchase(t, f);
    const results = await Promise.all(Array.from({ length: 20 }, () => postWebhook(t, d.source, delivery)));
    expect(results.map((r) => r.statusCode)).toEqual(Array(20).fill(200));
    expect(results.filter((r) => r.json.data.duplicate === false)).toHaveLength(1);
    expect(await tierOf(f.userId)).toBe(gold.tierId);
    expect((await changeRows(t, f.userId)).map((c) => c.cht_change_reason)).toEqual(['purchase']);
    const items = await t.services.db.selectFrom('odi_order_items').select('odi_order_item_id').where('odi_usr_user_id', '=', f.userId).execute();
    expect(items).toHaveLength(1);
  });

  it('a failed processing is answered 500, logged unprocessed, and its retry is processed', async () => {
    const f = await fact(silver);
    const delivery = await d.purchase(t, f);
    const spy = vi.spyOn(t.services.tiers.membership, 'within').mockImplementationOnce(() => {
      throw new Error('simulated database failure');
    });
    const failed = await postWebhook(t, d.source, delivery);
    spy.mockRestore();
    expect(failed.statusCode).toBe(500);
    expect(failed.json.errortype).toBe('TransactionError');
    expect(await tierOf(f.userId)).toBeNull();
    expect(await itemFor(t, d.source, f.ref)).toBeUndefined();
    const logged = (await webhookLogs(t, d.source)).at(-1)!;
    expect(logged).toMatchObject({ wbh_processed: false, wbh_error_message: 'simulated database failure' });
    const retry = await postWebhook(t, d.source, delivery);
    expect(retry.statusCode).toBe(200);
    expect(retry.json.data).toMatchObject({ duplicate: false, processed: true });
    expect(await tierOf(f.userId)).toBe(silver.tierId);
    expect((await webhookLogs(t, d.source)).find((l) => l.wbh_webhook_log_id === logged.wbh_webhook_log_id)).toMatchObject({ wbh_processed: true, wbh_error_message: null });
  });

  it('with the store inactive a delivery is verified, acknowledged and logged, and assigns nothing', async () => {
    const f = await fact(gold);
    await setStoreActive(t, false);
    try {
      const res = await postWebhook(t, d.source, await d.purchase(t, f));
      expect(res.statusCode).toBe(200);
      expect(res.json.data).toMatchObject({ duplicate: false, processed: false, outcomes: [] });
      expect(await tierOf(f.userId)).toBeNull();
      expect(await itemFor(t, d.source, f.ref)).toBeUndefined();
      const log = (await webhookLogs(t, d.source)).find((l) => l.wbh_event_id === res.json.data.event_id)!;
      expect(log).toMatchObject({ wbh_processed: true, wbh_error_message: 'store inactive: acknowledged, nothing assigned', wbh_unresolved_reason: 'store_inactive' });
      const bad = await postWebhook(t, d.source, await d.badSignature(t, f));
      expect(bad.statusCode).toBe(401);
    } finally {
      await setStoreActive(t, true);
    }
  });
});

describe('webhook channel', () => {
  it('an unknown source is 404 NotFound, before any verification', async () => {
    const res = await t.request({ method: 'POST', url: '/api/v1/webhooks/carrier_pigeon', headers: { 'content-type': 'application/json' }, payload: '{}' });
    expect(res.statusCode).toBe(404);
    expect(res.json).toMatchObject({ api_version: '1.0', errortype: 'NotFound' });
  });

  it('needs no API key and carries the security headers', async () => {
    const res = await t.request({ method: 'POST', url: '/api/v1/webhooks/card_processor', headers: { 'content-type': 'application/json' }, payload: '{}' });
    expect(res.statusCode).toBe(400);
    expect(res.json.errortype).toBe('AuthenticationError');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
  });
});

describe('wallet provider certificate', () => {
  it('is fetched only from the provider domain: any other certificate URL is refused 401 without a fetch', async () => {
    const before = wallet.certFetches().length;
    for (const certUrl of ['https://evil.example.com/cert.pem', 'http://api.paypal.com/v1/notifications/certs/X', 'https://api.paypal.com.evil.net/c', 'https://api.paypal.com:8443/c']) {
      const body = JSON.stringify({ id: uniqueRef('WH-'), event_type: 'BILLING.SUBSCRIPTION.ACTIVATED', create_time: t.clock.now().toISOString(), resource: {} });
      const res = await postWebhook(t, 'wallet_provider', signWallet(body, { key: wallet.cert, time: t.clock.now(), certUrl }));
      expect(res.statusCode, certUrl).toBe(401);
    }
    expect(wallet.certFetches().length).toBe(before);
  });

  it('is fetched once and then served from the cache', async () => {
    for (let i = 0; i < 2; i++) {
      const userId = (await t.createUser()).userId;
      const f = { userId, productId: 0, providerProductId: 'P-none', ref: uniqueRef('I-'), at: t.clock.now(), periodEnd: t.clock.now() };
      expect((await postWebhook(t, 'wallet_provider', await wallet.purchase(t, f))).statusCode).toBe(200);
    }
    expect(wallet.certFetches().filter((u) => u === `${wallet.fake.base}${WALLET_CERT_PATH}`)).toHaveLength(1);
  });
});

describe('iOS store signature chain', () => {
  const fact = async (): Promise<ProviderFact> => {
    const userId = (await t.createUser()).userId;
    const providerProductId = uniqueRef('ios-chain-');
    const productId = await createProduct(t, { tierId: gold.tierId, refs: { pro_ios_product_id: providerProductId } });
    return { userId, productId, providerProductId, ref: uniqueRef('1000'), at: T0, periodEnd: at(30) };
  };

  const trusted = () => DRIVERS[2] as IosDriver;
  const refusedUnchanged = async (res: Awaited<ReturnType<typeof postWebhook>>, f: ProviderFact, status: number, errortype: string, logsBefore: number) => {
    expect(res.statusCode, res.body).toBe(status);
    expect(res.json).toMatchObject({ api_version: '1.0', errortype });
    expect(await webhookLogs(t, 'ios_store')).toHaveLength(logsBefore);
    expect(await tierOf(f.userId)).toBeNull();
    expect(await itemFor(t, 'ios_store', f.ref)).toBeUndefined();
  };

  it('the chain is checked online: a leaf valid now verifies after its OCSP responder answers good; one expired now is refused', async () => {
    const f = await fact();
    const { chain, ocsp } = trusted();
    const day = 86_400_000;
    const fresh = { ...chain, leaf: makeAppleLeaf(chain.intermediate, { leafNotBefore: new Date(Date.now() - 30 * day), leafNotAfter: new Date(Date.now() + 30 * day) }) };
    const stale = { ...chain, leaf: makeAppleLeaf(chain.intermediate, { leafNotBefore: new Date(Date.now() - 30 * day), leafNotAfter: new Date(Date.now() - day) }) };
    await refusedUnchanged(await postWebhook(t, 'ios_store', await trusted().notify(t, f, 'SUBSCRIBED', 'INITIAL_BUY', stale)), f, 401, 'AuthenticationError', (await webhookLogs(t, 'ios_store')).length);
    const asked = ocsp.requests.length;
    expect((await postWebhook(t, 'ios_store', await trusted().notify(t, f, 'SUBSCRIBED', 'INITIAL_BUY', fresh))).statusCode).toBe(200);
    expect(await tierOf(f.userId)).toBe(gold.tierId);
    // The leaf and the intermediate were each asked about at the responder the certificates name.
    expect(ocsp.requests.slice(asked).flat()).toEqual(expect.arrayContaining([serialOf(fresh.leaf), serialOf(chain.intermediate)]));
  });

  it('a notification whose leaf the OCSP responder reports revoked is 401 AuthenticationError and changes nothing', async () => {
    const f = await fact();
    const { chain, ocsp } = trusted();
    const revoked = { ...chain, leaf: makeAppleLeaf(chain.intermediate) };
    ocsp.revoke(chain.intermediate, revoked.leaf);
    const before = (await webhookLogs(t, 'ios_store')).length;
    await refusedUnchanged(await postWebhook(t, 'ios_store', await trusted().notify(t, f, 'SUBSCRIBED', 'INITIAL_BUY', revoked)), f, 401, 'AuthenticationError', before);
    expect(await changeRows(t, f.userId)).toEqual([]);
  });

  it('a notification whose OCSP responder is down is refused as retryable (500 TransactionError, so the App Store redelivers) and changes nothing', async () => {
    const f = await fact();
    const { chain } = trusted();
    const unreachable = { ...chain, leaf: makeAppleLeaf(chain.intermediate, { ocspUrl: await downUrl() }) };
    const before = (await webhookLogs(t, 'ios_store')).length;
    const res = await postWebhook(t, 'ios_store', await trusted().notify(t, f, 'SUBSCRIBED', 'INITIAL_BUY', unreachable));
    await refusedUnchanged(res, f, 500, 'TransactionError', before);
    expect(res.json.error).toMatch(/retry/);
    expect(await changeRows(t, f.userId)).toEqual([]);
  });

  it('unsigned environments (Xcode, LocalTesting) are refused rather than trusted', async () => {
    const f = await fact();
    await t.services.settings.set('ios_store_environment', 'Xcode');
    try {
      const res = await postWebhook(t, 'ios_store', await trusted().notify(t, f, 'SUBSCRIBED', 'INITIAL_BUY'));
      expect(res.statusCode).toBe(401);
      expect(await tierOf(f.userId)).toBeNull();
    } finally {
      await t.services.settings.set('ios_store_environment', 'Sandbox');
    }
  });
});

describe('Android store push', () => {
  const fact = async (): Promise<ProviderFact> => {
    const userId = (await t.createUser()).userId;
    const providerProductId = uniqueRef('android-');
    const productId = await createProduct(t, { tierId: silver.tierId, refs: { pro_android_product_id: providerProductId } });
    return { userId, productId, providerProductId, ref: uniqueRef('token-'), at: T0, periodEnd: at(30) };
  };

  it('a push whose claim the Play Developer API does not confirm (expiry while ACTIVE) changes nothing', async () => {
    const f = await fact();
    expect((await postWebhook(t, 'android_store', await android.purchase(t, f))).statusCode).toBe(200);
    const res = await postWebhook(t, 'android_store', await android.push(t, { ...f, at: at(1) }, 13));
    expect(res.statusCode).toBe(200);
    expect(res.json.data).toMatchObject({ processed: false, outcomes: [] });
    expect(await tierOf(f.userId)).toBe(silver.tierId);
  });

  it('reads the subscription with the Play API bearer token, and a Play API failure is a 500 the provider retries', async () => {
    const f = await fact();
    const delivery = await android.purchase(t, f);
    android.play.subscriptions.delete(f.ref);
    const failed = await postWebhook(t, 'android_store', delivery);
    expect(failed.statusCode).toBe(500);
    expect(await tierOf(f.userId)).toBeNull();
    await android.purchase(t, f);
    const retry = await postWebhook(t, 'android_store', delivery);
    expect(retry.statusCode).toBe(200);
    expect(await tierOf(f.userId)).toBe(silver.tierId);
    const reads = android.play.calls.filter((c) => c.path.endsWith(`/tokens/${f.ref}`));
    expect(reads.length).toBe(2);
    expect(reads[0]!.path).toBe(`/androidpublisher/v3/applications/com.example.gatehouse/purchases/subscriptionsv2/tokens/${f.ref}`);
  });

  it('a Google-signed token issued to any account but the push subscription\'s is refused, and so is an unverified email', async () => {
    const f = await fact();
    const d = await android.purchase(t, f);
    for (const claims of [{ email: 'attacker@other-project.iam.gserviceaccount.com' }, { email: ANDROID_PUSH_EMAIL, emailVerified: false }]) {
      const token = signOidcToken(android.key, { aud: ANDROID_AUDIENCE, ...claims });
      const res = await postWebhook(t, 'android_store', { ...d, headers: { ...d.headers, authorization: `Bearer ${token}` } });
      expect(res.statusCode).toBe(401);
      expect(res.json.errortype).toBe('AuthenticationError');
    }
    expect(await tierOf(f.userId)).toBeNull();
  });

  it('refuses every push while the push service account is not configured', async () => {
    const f = await fact();
    await t.services.settings.set('android_store_push_email', '');
    try {
      const res = await postWebhook(t, 'android_store', await android.purchase(t, f));
      expect(res.statusCode).toBe(401);
      expect(await tierOf(f.userId)).toBeNull();
    } finally {
      await t.services.settings.set('android_store_push_email', ANDROID_PUSH_EMAIL);
    }
  });

  it('a voided-purchase notification the Play API does not confirm (still ACTIVE) removes nothing', async () => {
    const f = await fact();
    expect((await postWebhook(t, 'android_store', await android.purchase(t, f))).statusCode).toBe(200);
    const refund = await android.refund(t, { ...f, at: at(1) });
    await android.purchase(t, f); // the Play API still reports the subscription ACTIVE
    const res = await postWebhook(t, 'android_store', refund);
    expect(res.statusCode).toBe(200);
    expect(res.json.data).toMatchObject({ processed: false, outcomes: [] });
    expect(await tierOf(f.userId)).toBe(silver.tierId);
  });

  it('a correctly signed token for another audience is refused', async () => {
    const f = await fact();
    const d = await android.purchase(t, f);
    const token = signOidcToken(android.key, { aud: 'https://someone-else.example/push' });
    const res = await postWebhook(t, 'android_store', { ...d, headers: { ...d.headers, authorization: `Bearer ${token}` } });
    expect(res.statusCode).toBe(401);
    expect(await tierOf(f.userId)).toBeNull();
  });
});
