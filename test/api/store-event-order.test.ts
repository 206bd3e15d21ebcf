import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatTimestamp } from '../../src/lib/time.js';
import { storeAccountToken } from '../../src/store/accounts.js';
import { createCheckout } from '../../src/store/checkout.js';
import { StoreReplayError, StoreReplayInputError } from '../../src/store/replay-errors.js';
import { replayStoreEvent } from '../../src/store/unresolved.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { listenLocally, startCardCheckout } from '../helpers/card-checkout.js';
import { androidDriver } from '../helpers/providers/android-driver.js';
import { cardDriver } from '../helpers/providers/card-driver.js';
import type { FakeStripe } from '../helpers/providers/fake-stripe.js';
import { iosDriver } from '../helpers/providers/ios-driver.js';
import { signWallet, walletDriver } from '../helpers/providers/wallet-driver.js';
import { createProduct, itemFor, postWebhook, providerDay, tierOf as tierOfUser, setStoreActive, uniqueRef, webhookLogs, type Delivery, type ProviderFact, type SourceDriver } from '../helpers/store.js';
import { createTier, tierMemberships, type TestTier } from '../helpers/tiers.js';

// Issue 22 items 2-5 (DESIGN 13): refunds found through every reference, removals that arrive before their
// purchase, events kept as not applied and replayed, event times from signed data, delayed card payments.

const wallet = walletDriver();
const android = androidDriver();
const ios = iosDriver();
const DRIVERS: SourceDriver[] = [cardDriver, wallet, ios, android];

let t: TestApp;
let stripe: FakeStripe;
let gold: TestTier;
beforeAll(async () => {
  t = await createTestApp();
  stripe = await startCardCheckout(t, await listenLocally(t));
  gold = await createTier(t, { name: 'gold', level: 30 });
  for (const d of DRIVERS) await d.setup(t);
});
afterAll(async () => {
  for (const d of DRIVERS) await d.teardown();
  await stripe.stop();
  await t.close();
});

const at = providerDay;
const tierOf = (userId: number) => tierOfUser(t, userId);

const order = (orderId: number) => t.services.db.selectFrom('ord_orders').selectAll().where('ord_order_id', '=', orderId).executeTakeFirstOrThrow();
const itemsOf = (orderId: number) => t.services.db.selectFrom('odi_order_items').selectAll().where('odi_ord_order_id', '=', orderId).execute();
const logOf = async (source: string, eventId: string) => (await webhookLogs(t, source)).find((l) => l.wbh_event_id === eventId)!;

/** A card-processor delivery's answer (the fake provider posts it to the app over HTTP). */
async function delivered(p: Promise<{ status: number; body: string }>) {
  const res = await p;
  expect(res.status, res.body).toBe(200);
  return JSON.parse(res.body).data as { event_id: string; outcomes: Array<Record<string, any>>; processed: boolean };
}

/** A hosted-checkout subscription, started by our checkout and paid at the provider. */
async function checkoutSubscription(o: { delayed?: boolean } = {}) {
  const userId = (await t.createUser()).userId;
  const productId = await createProduct(t, { tierId: gold.tierId, refs: { pro_card_price_id: uniqueRef('price_') }, price: 2500 });
  const { orderId } = await createCheckout(t.services.db, t.services, userId, [{ product_id: productId, quantity: 1 }], { successUrl: 'https://shop.example/ok', cancelUrl: 'https://shop.example/no' });
  const sessionId = (await order(orderId)).ord_stripe_session_id!;
  const first = await delivered(o.delayed ? stripe.completeDelayed(sessionId) : stripe.complete(sessionId));
  const session = stripe.sessions.get(sessionId)!;
  const paymentIntent = stripe.invoicePayments.get(session.invoice)!.payment.payment_intent;
  return { userId, productId, orderId, sessionId, session, first, subscription: session.subscription as string, invoice: session.invoice as string, paymentIntent };
}

const charge = (c: Record<string, unknown>) => ({ id: uniqueRef('ch_'), object: 'charge', amount: 2500, amount_refunded: 2500, refunded: true, invoice: null, payment_intent: null, metadata: {}, ...c });

describe('a card refund is found through every reference the provider gives', () => {
  it('a full refund naming only the invoice of a hosted-checkout subscription removes the tier through the one removal path', async () => {
    const c = await checkoutSubscription();
    expect(c.first.outcomes).toEqual([expect.objectContaining({ outcome: 'granted', grant: 'joined' })]);
    expect(await order(c.orderId)).toMatchObject({ ord_status: 2, ord_stripe_invoice_id: c.invoice });
    const data = await delivered(stripe.deliver('charge.refunded', charge({ invoice: c.invoice })));
    expect(data.outcomes).toEqual([expect.objectContaining({ outcome: 'removed', removedTierIds: [gold.tierId] })]);
    expect(await tierOf(c.userId)).toBeNull();
    expect(await itemFor(t, 'card_processor', c.subscription)).toMatchObject({ odi_subscription_status: 'refunded', odi_status: 4, odi_refund_amount: 2500 });
    expect(await order(c.orderId)).toMatchObject({ ord_refund_amount: 2500 });
  });

  it('a partial refund naming only the invoice is recorded on the order and the item and removes nothing', async () => {
    const c = await checkoutSubscription();
    t.clock.advanceSeconds(60);
    const data = await delivered(stripe.deliver('charge.refunded', charge({ invoice: c.invoice, amount_refunded: 1000, refunded: false })));
    expect(data.outcomes).toEqual([{ outcome: 'refund_recorded', orderItemId: expect.any(Number), amount: 1000 }]);
    expect(await tierOf(c.userId)).toBe(gold.tierId);
    expect(await itemFor(t, 'card_processor', c.subscription)).toMatchObject({ odi_subscription_status: 'active', odi_status: 2, odi_refund_amount: 1000 });
    expect((await itemFor(t, 'card_processor', c.subscription))!.odi_refund_time).not.toBeNull();
    expect(await order(c.orderId)).toMatchObject({ ord_status: 2, ord_refund_amount: 1000 });
  });

  it('a full refund naming only the subscription in its metadata removes the tier', async () => {
    const c = await checkoutSubscription();
    const data = await delivered(stripe.deliver('charge.refunded', charge({ metadata: { subscription_id: c.subscription } })));
    expect(data.outcomes).toEqual([expect.objectContaining({ outcome: 'removed' })]);
    expect(await tierOf(c.userId)).toBeNull();
  });

  it('a full refund naming only a payment intent we never recorded is resolved through the provider API', async () => {
    const c = await checkoutSubscription();
    const before = stripe.callsTo('GET', '/v1/invoice_payments').length;
    const data = await delivered(stripe.deliver('charge.refunded', charge({ payment_intent: c.paymentIntent })));
    expect(data.outcomes).toEqual([expect.objectContaining({ outcome: 'removed' })]);
    expect(await tierOf(c.userId)).toBeNull();
    expect(stripe.callsTo('GET', '/v1/invoice_payments').length).toBe(before + 1);
    expect(stripe.callsTo('GET', `/v1/invoices/${c.invoice}`).length).toBe(1);
  });

  it('a refund that arrives before its purchase is kept and applied when the purchase arrives', async () => {
    const userId = (await t.createUser()).userId;
    const productId = await createProduct(t, { tierId: gold.tierId, price: 2500 });
    const subscription = uniqueRef('sub_early_');
    const invoice = uniqueRef('in_early_');
    stripe.addSubscription(subscription, 'price_early', Math.floor(at(30).getTime() / 1000));
    stripe.invoiceSubscriptions.set(invoice, subscription);
    // The provider API names the invoice's subscription: the refund is kept under both.
    const refund = await delivered(stripe.deliver('charge.refunded', charge({ invoice })));
    expect(refund.outcomes).toEqual([{ outcome: 'pending', references: [subscription, invoice] }]);
    const session = { id: uniqueRef('cs_'), object: 'checkout.session', mode: 'subscription', subscription, invoice, payment_intent: null, payment_status: 'paid', amount_total: 2500, currency: 'usd', metadata: { user_id: String(userId), product_id: String(productId) } };
    // The purchase happened before the refund: it is recorded, and the refund then takes effect.
    const purchase = await delivered(stripe.deliver('checkout.session.completed', session, { created: stripe.now() - 3600 }));
    expect(purchase.outcomes).toEqual([
      expect.objectContaining({ outcome: 'superseded', by: 'refund' }),
      { outcome: 'pending_applied', eventId: refund.event_id, result: expect.objectContaining({ outcome: 'not_tier_bearing' }) },
    ]);
    expect(await tierOf(userId)).toBeNull();
    expect(await itemFor(t, 'card_processor', subscription)).toMatchObject({ odi_subscription_status: 'refunded' });
  });
});

describe.each(DRIVERS)('a removal that arrives before its purchase ($source)', (d) => {
  const fact = async (): Promise<ProviderFact> => {
    const userId = (await t.createUser()).userId;
    const providerProductId = uniqueRef(`${d.source}-p-`);
    const productId = await createProduct(t, { tierId: gold.tierId, refs: { [d.productColumn]: providerProductId } });
    return { userId, productId, providerProductId, ref: uniqueRef('sub'), at: at(0), periodEnd: at(30) };
  };
  const ok = async (delivery: Promise<Delivery>) => {
    const res = await postWebhook(t, d.source, await delivery);
    expect(res.statusCode, res.body).toBe(200);
    return res.json.data;
  };

  it('an expiry delivered before its (older) purchase leaves the user tierless after both', async () => {
    const f = await fact();
    const expiry = await ok(d.expiry(t, { ...f, at: at(30) }));
    expect(expiry.outcomes).toEqual([{ outcome: 'pending', references: [f.ref] }]);
    expect(await tierOf(f.userId)).toBeNull();
    const purchase = await ok(d.purchase(t, f));
    expect(purchase.outcomes).toEqual([
      { outcome: 'superseded', orderItemId: expect.any(Number), by: expect.stringMatching(/^(expiry|cancellation)$/) },
      { outcome: 'pending_applied', eventId: expiry.event_id, result: expect.objectContaining({ outcome: 'not_tier_bearing' }) },
    ]);
    expect(await tierOf(f.userId)).toBeNull();
    expect(await itemFor(t, d.source, f.ref)).toMatchObject({ odi_subscription_status: 'expired', odi_usr_user_id: f.userId });
    const pending = await t.services.db.selectFrom('spe_store_pending_events').selectAll().where('spe_reference', '=', f.ref).execute();
    expect(pending).toHaveLength(1);
    expect(pending[0]!.spe_applied_time).not.toBeNull();
  });

  it('a purchase newer than a removal kept for it grants (the later provider time wins)', async () => {
    const f = await fact();
    const expiry = await ok(d.expiry(t, { ...f, at: at(1) }));
    expect(expiry.outcomes).toEqual([{ outcome: 'pending', references: [f.ref] }]);
    const purchase = await ok(d.purchase(t, { ...f, at: at(2), periodEnd: at(32) }));
    expect(purchase.outcomes).toEqual([
      expect.objectContaining({ outcome: 'granted', grant: 'joined' }),
      { outcome: 'pending_applied', eventId: expiry.event_id, result: expect.objectContaining({ outcome: 'stale' }) },
    ]);
    expect(await tierOf(f.userId)).toBe(gold.tierId);
  });
});

describe('events kept as not applied, listed and replayed once', () => {
  const unresolvedList = async (headers: Record<string, string>) => t.request({ method: 'GET', url: '/api/v1/management/store/unresolved', headers });
  const replay = (eventId: string, source?: string) =>
    replayStoreEvent(t.services.store.context(), { active: t.services.store.active(), membership: t.services.tiers.membership, eventId, source: source ?? null });

  it('a purchase whose product cannot be resolved is kept with its reason, listed, and applied once after the fix', async () => {
    const userId = (await t.createUser()).userId;
    const productRef = uniqueRef('com.example.unknown.');
    const f: ProviderFact = { userId, productId: 0, providerProductId: productRef, ref: uniqueRef('ios-'), at: at(0), periodEnd: at(30) };
    const receivedAt = formatTimestamp(t.clock.now());
    const res = await postWebhook(t, 'ios_store', await ios.purchase(t, f));
    expect(res.statusCode).toBe(200);
    expect(res.json.data.outcomes).toEqual([{ outcome: 'unresolved', missing: 'product' }]);
    const eventId = res.json.data.event_id as string;
    expect(await logOf('ios_store', eventId)).toMatchObject({ wbh_processed: true, wbh_unresolved_reason: 'unknown_product', wbh_error_message: 'unresolved product', wbh_replay_time: null });
    expect(await tierOf(userId)).toBeNull();

    const admin = await t.keyHeaders({ userPermission: 10 });
    const listed = await unresolvedList(admin.headers);
    expect(listed.statusCode, listed.body).toBe(200);
    expect(listed.json.data.events).toContainEqual({
      webhook_log_id: expect.any(Number),
      source: 'ios_store',
      event_id: eventId,
      event_type: 'SUBSCRIBED.INITIAL_BUY',
      reason: 'unknown_product',
      event_time: '2026-03-01 11:00:00',
      received_time: receivedAt,
    });
    expect(listed.json.data.count).toBe(listed.json.data.events.length);
    expect(listed.json.data.total).toBeGreaterThanOrEqual(1);
    const staff = await t.staffHeaders();
    const refused = await unresolvedList(staff.headers);
    expect(refused.statusCode).toBe(403);
    expect(refused.json.errortype).toBe('AuthenticationError');

    // Still unresolved: nothing applied, and it stays listed.
    await expect(replay(eventId)).rejects.toThrow(StoreReplayError);
    expect(await tierOf(userId)).toBeNull();
    // The operator links the product to the store's reference, then replays.
    await createProduct(t, { tierId: gold.tierId, refs: { pro_ios_product_id: productRef } });
    const replayed = await replay(eventId, 'ios_store');
    expect(replayed).toEqual({ event_id: eventId, source: 'ios_store', event_type: 'SUBSCRIBED.INITIAL_BUY', replayed: true, outcomes: [expect.objectContaining({ outcome: 'granted', grant: 'joined' })] });
    expect(await tierOf(userId)).toBe(gold.tierId);
    expect((await logOf('ios_store', eventId)).wbh_replay_time).toEqual(t.clock.now());
    expect((await unresolvedList(admin.headers)).json.data.events.map((e: { event_id: string }) => e.event_id)).not.toContain(eventId);
    // Once only.
    await expect(replay(eventId)).rejects.toThrow(StoreReplayInputError);
    await expect(replay(eventId)).rejects.toThrow(`already replayed at ${formatTimestamp(t.clock.now())}`);
    expect((await tierMemberships(t, userId)).length).toBe(1);
  });

  it('an event received while the store is inactive is kept and applied by a replay once the store is active', async () => {
    const userId = (await t.createUser()).userId;
    const priceRef = uniqueRef('price_');
    const productId = await createProduct(t, { tierId: gold.tierId, refs: { pro_card_price_id: priceRef } });
    const f: ProviderFact = { userId, productId, providerProductId: priceRef, ref: uniqueRef('sub'), at: at(0), periodEnd: at(30) };
    await setStoreActive(t, false);
    let eventId: string;
    try {
      const res = await postWebhook(t, 'card_processor', await cardDriver.purchase(t, f));
      expect(res.statusCode).toBe(200);
      expect(res.json.data).toMatchObject({ processed: false, outcomes: [] });
      eventId = res.json.data.event_id;
      expect(await logOf('card_processor', eventId)).toMatchObject({ wbh_unresolved_reason: 'store_inactive' });
      // An event type the store does not act on is not kept.
      const other = await postWebhook(t, 'card_processor', await signedCardEvent('customer.created', { id: 'cus_1', object: 'customer' }));
      expect(await logOf('card_processor', other.json.data.event_id)).toMatchObject({ wbh_unresolved_reason: null });
      await expect(replay(eventId)).rejects.toThrow(/store is inactive/);
    } finally {
      await setStoreActive(t, true);
    }
    expect(await tierOf(userId)).toBeNull();
    const admin = await t.keyHeaders({ userPermission: 10 });
    expect((await unresolvedList(admin.headers)).json.data.events).toContainEqual(expect.objectContaining({ event_id: eventId, source: 'card_processor', reason: 'store_inactive' }));
    const replayed = await replay(eventId);
    expect(replayed.outcomes).toEqual([expect.objectContaining({ outcome: 'granted', grant: 'joined' })]);
    expect(await tierOf(userId)).toBe(gold.tierId);
    await expect(replay(eventId)).rejects.toThrow(/already replayed/);
  });

  it('a replay naming no kept event is refused as bad input', async () => {
    await expect(replay('evt_never_seen')).rejects.toThrow(StoreReplayInputError);
    await expect(replay('x', 'carrier_pigeon')).rejects.toThrow(/Unknown source/);
  });
});

async function signedCardEvent(type: string, object: Record<string, unknown>): Promise<Delivery> {
  const { stripeEvent, stripeSignature } = await import('../helpers/providers/stripe-signer.js');
  const { CARD_WEBHOOK_SECRET } = await import('../helpers/providers/card-driver.js');
  const body = JSON.stringify(stripeEvent(type, object, { created: Math.floor(t.clock.nowMs() / 1000) }));
  return { headers: { 'content-type': 'application/json', 'stripe-signature': stripeSignature(body, CARD_WEBHOOK_SECRET, Math.floor(t.clock.nowMs() / 1000)) }, body };
}

describe('delayed card payments', () => {
  it('a checkout completed with its payment still on its way grants nothing; the payment succeeding grants', async () => {
    const c = await checkoutSubscription({ delayed: true });
    expect(c.first.outcomes).toEqual([{ outcome: 'payment_pending', orderId: c.orderId }]);
    expect(await tierOf(c.userId)).toBeNull();
    expect(await order(c.orderId)).toMatchObject({ ord_status: 1, ord_stripe_invoice_id: c.invoice });
    expect(await itemsOf(c.orderId)).toEqual([expect.objectContaining({ odi_status: 1, odi_subscription_status: null, odi_subscription_reference: null })]);
    t.clock.advanceSeconds(3600);
    const paid = await delivered(stripe.settle(c.sessionId, true));
    expect(paid.outcomes).toEqual([expect.objectContaining({ outcome: 'granted', grant: 'joined' })]);
    expect(await tierOf(c.userId)).toBe(gold.tierId);
    expect(await order(c.orderId)).toMatchObject({ ord_status: 2 });
    expect(await itemFor(t, 'card_processor', c.subscription)).toMatchObject({ odi_ord_order_id: c.orderId, odi_subscription_status: 'active', odi_status: 2 });
  });

  it('the payment failing cancels the pending order, and a late success older than the failure grants nothing', async () => {
    const c = await checkoutSubscription({ delayed: true });
    t.clock.advanceSeconds(3600);
    const failed = await delivered(stripe.settle(c.sessionId, false));
    expect(failed.outcomes).toEqual([{ outcome: 'payment_failed', orderId: c.orderId, cancelled: true }]);
    expect(await order(c.orderId)).toMatchObject({ ord_status: 3, ord_error: 'The payment failed' });
    expect(await tierOf(c.userId)).toBeNull();
    // A success event stamped before the failure (delivered late) changes nothing.
    const late = await delivered(stripe.settle(c.sessionId, true, { created: stripe.now() - 1800 }));
    expect(late.outcomes).toEqual([expect.objectContaining({ outcome: 'stale' })]);
    expect(await tierOf(c.userId)).toBeNull();
    expect(await order(c.orderId)).toMatchObject({ ord_status: 3 });
  });
});

describe('event times come from signed provider data', () => {
  it('Android: the Play API\'s startTime orders a purchase, never the unsigned push body\'s eventTimeMillis', async () => {
    const userId = (await t.createUser()).userId;
    const providerProductId = uniqueRef('android-');
    const productId = await createProduct(t, { tierId: gold.tierId, refs: { pro_android_product_id: providerProductId } });
    const f: ProviderFact = { userId, productId, providerProductId, ref: uniqueRef('token-'), at: at(0), periodEnd: at(30) };
    await android.purchase(t, f); // the Play API: started at(0)
    const res = await postWebhook(t, 'android_store', await android.push(t, { ...f, at: at(100) }, 4)); // the push body claims at(100)
    expect(res.json.data.outcomes).toEqual([expect.objectContaining({ outcome: 'granted' })]);
    expect((await itemFor(t, 'android_store', f.ref))!.odi_last_event_time).toEqual(at(0));
    // So an expiry the Play API dates at(31) is not taken for stale.
    const expiry = await postWebhook(t, 'android_store', await android.expiry(t, { ...f, at: at(31) }));
    expect(expiry.json.data.outcomes).toEqual([expect.objectContaining({ outcome: 'removed' })]);
    expect(await tierOf(userId)).toBeNull();
    expect((await itemFor(t, 'android_store', f.ref))!.odi_last_event_time).toEqual(at(31));
  });

  it('Android: a notification the Play API states no time for is ordered by its receipt time, which never becomes the watermark', async () => {
    const userId = (await t.createUser()).userId;
    const providerProductId = uniqueRef('android-');
    const productId = await createProduct(t, { tierId: gold.tierId, refs: { pro_android_product_id: providerProductId } });
    const f: ProviderFact = { userId, productId, providerProductId, ref: uniqueRef('token-'), at: at(-2), periodEnd: at(30) };
    await postWebhook(t, 'android_store', await android.purchase(t, f));
    await postWebhook(t, 'android_store', await android.cancelScheduled(t, { ...f, at: at(-1) }));
    const undo = await postWebhook(t, 'android_store', await android.cancelUndone(t, { ...f, at: at(5) }));
    expect(undo.json.data.outcomes).toEqual([expect.objectContaining({ outcome: 'status_changed', status: 'active' })]);
    expect((await itemFor(t, 'android_store', f.ref))!.odi_last_event_time).toEqual(at(-1));
  });

  const walletEvent = async (userId: number, plan: string, ref: string, o: { type: string; createTime?: Date; statusUpdateTime?: Date; status: string }) => {
    const resource = {
      id: ref,
      status: o.status,
      plan_id: plan,
      custom_id: await storeAccountToken(t.services.db, userId),
      ...(o.statusUpdateTime ? { status_update_time: o.statusUpdateTime.toISOString() } : {}),
    };
    const body = JSON.stringify({ id: uniqueRef('WH-'), event_type: o.type, resource_type: 'subscription', resource, ...(o.createTime ? { create_time: o.createTime.toISOString() } : {}) });
    return postWebhook(t, 'wallet_provider', signWallet(body, { key: wallet.cert, time: t.clock.now(), certBase: wallet.fake.base }));
  };

  it('wallet: the signed resource\'s status time orders an event; with no time stated the receipt time never outranks a signed one', async () => {
    const userId = (await t.createUser()).userId;
    const plan = uniqueRef('P-');
    await createProduct(t, { tierId: gold.tierId, refs: { pro_wallet_plan_id: plan } });
    const ref = uniqueRef('I-');
    const bought = await walletEvent(userId, plan, ref, { type: 'BILLING.SUBSCRIPTION.ACTIVATED', status: 'ACTIVE', statusUpdateTime: at(-3), createTime: at(-2) });
    expect(bought.json.data.outcomes).toEqual([expect.objectContaining({ outcome: 'granted' })]);
    expect((await itemFor(t, 'wallet_provider', ref))!.odi_last_event_time).toEqual(at(-3));
    // No time in the body: applied at its receipt time (a hold, DESIGN 14), which does not become the watermark ...
    const suspended = await walletEvent(userId, plan, ref, { type: 'BILLING.SUBSCRIPTION.SUSPENDED', status: 'SUSPENDED' });
    expect(suspended.json.data.outcomes).toEqual([expect.objectContaining({ outcome: 'removed', removedTierIds: [gold.tierId] })]);
    expect((await itemFor(t, 'wallet_provider', ref))!.odi_last_event_time).toEqual(at(-3));
    // ... so a signed event dated before that receipt time is still applied, not taken for stale.
    const reactivated = await walletEvent(userId, plan, ref, { type: 'BILLING.SUBSCRIPTION.RE-ACTIVATED', status: 'ACTIVE', statusUpdateTime: at(-1) });
    expect(reactivated.json.data.outcomes).toEqual([expect.objectContaining({ outcome: 'granted', grant: 'joined' })]);
    expect((await itemFor(t, 'wallet_provider', ref))!.odi_subscription_status).toBe('active');
    expect((await itemFor(t, 'wallet_provider', ref))!.odi_last_event_time).toEqual(at(-1));
    // And a signed event older than the signed watermark is stale.
    const late = await walletEvent(userId, plan, ref, { type: 'BILLING.SUBSCRIPTION.EXPIRED', status: 'EXPIRED', statusUpdateTime: at(-2) });
    expect(late.json.data.outcomes).toEqual([expect.objectContaining({ outcome: 'stale' })]);
    expect(await tierOf(userId)).toBe(gold.tierId);
  });
});
