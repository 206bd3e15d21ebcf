import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { storeAccountToken } from '../../src/store/accounts.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { androidDriver } from '../helpers/providers/android-driver.js';
import { CARD_WEBHOOK_SECRET, cardDriver } from '../helpers/providers/card-driver.js';
import { iosDriver } from '../helpers/providers/ios-driver.js';
import { stripeEvent, stripeSignature } from '../helpers/providers/stripe-signer.js';
import { signWallet, walletDriver } from '../helpers/providers/wallet-driver.js';
import { createProduct, itemFor, postWebhook, providerDay, setStoreActive, tierOf, uniqueRef, type Delivery, type ProviderFact, type SourceDriver } from '../helpers/store.js';
import { changeRows, createTier, type TestTier } from '../helpers/tiers.js';

/**
 * Billing-issue states (DESIGN 14) for each source, through the webhook endpoints as each provider calls
 * them (their own message shapes, signed as they sign): in_grace keeps the tier until grace_until,
 * on_hold and paused remove it through the one removal path, a recovery grants it back through the one
 * grant path, every transition leaves a change-tracking row, and a late failure never outranks a newer renewal.
 */
const wallet = walletDriver();
const ios = iosDriver();
const android = androidDriver();
const CLOCK_START = '2026-03-01T12:00:00Z';
const at = providerDay;
const secs = (d: Date) => Math.floor(d.getTime() / 1000);
/** The contract's timestamp format of a provider day. */
const stamp = (d: Date) => d.toISOString().replace('T', ' ').slice(0, 19);

let t: TestApp;
let silver: TestTier;
beforeAll(async () => {
  t = await createTestApp({ start: CLOCK_START });
  await setStoreActive(t, true);
  silver = await createTier(t, { name: 'silver', level: 20 });
  for (const d of [cardDriver, wallet, ios, android]) await d.setup(t);
});
afterAll(async () => {
  for (const d of [cardDriver, wallet, ios, android]) await d.teardown();
  await t.close();
});
beforeEach(async () => {
  t.clock.set(CLOCK_START);
  await t.services.settings.set('card_processor_grace_days', 7);
  await t.services.settings.set('wallet_provider_grace_days', 10);
});

const send = async (source: string, delivery: Delivery | Promise<Delivery>) => {
  const res = await postWebhook(t, source, await delivery);
  expect(res.statusCode, res.body).toBe(200);
  return res.json.data as { processed: boolean; outcomes: Array<Record<string, unknown>> };
};
const runPeriodEnd = async () => {
  const [outcome] = await t.services.scheduler.runNow('subscription_period_end');
  return (outcome as { result: Record<string, number> }).result;
};

/** A member (with a session key) who bought the silver plan at this source on day 0, paid until day 30. */
async function subscribed(d: SourceDriver): Promise<ProviderFact & { headers: Record<string, string> }> {
  const { headers, userId } = await t.keyHeaders();
  const providerProductId = uniqueRef(`${d.source}-silver-`);
  const productId = await createProduct(t, { tierId: silver.tierId, refs: { [d.productColumn]: providerProductId }, name: 'Silver monthly' });
  const f = { userId, productId, providerProductId, ref: uniqueRef(d.source === 'card_processor' ? 'sub_' : 'sub'), at: at(0), periodEnd: at(30) };
  const bought = await send(d.source, d.purchase(t, f));
  expect(bought.outcomes[0]).toMatchObject({ outcome: 'granted', grant: 'joined' });
  return { ...f, headers };
}

const item = async (f: ProviderFact, source: SourceDriver['source']) => (await itemFor(t, source, f.ref))!;

/** The subscription's status transitions as change tracking recorded them: 'from>to:reason'. */
async function statusTrail(userId: number): Promise<string[]> {
  return (await changeRows(t, userId)).filter((r) => r.cht_field_name === 'subscription_status').map((r) => `${r.cht_old_value}>${r.cht_new_value}:${r.cht_change_reason}`);
}
/** The tier changes as change tracking recorded them: 'reason:old>new'. */
async function tierTrail(userId: number): Promise<string[]> {
  return (await changeRows(t, userId)).filter((r) => r.cht_field_name === 'tier_membership').map((r) => `${r.cht_change_reason}:${r.cht_old_value}>${r.cht_new_value}`);
}

async function summaryEntry(headers: Record<string, string>) {
  const res = await t.request({ method: 'POST', url: '/api/v1/action/subscription_summary', headers, payload: {} });
  expect(res.statusCode, res.body).toBe(200);
  return res.json.data.subscriptions[0] as Record<string, unknown> | undefined;
}

describe('card processor', () => {
  const md = (f: ProviderFact) => ({ user_id: String(f.userId), product_id: String(f.productId) });
  const sign = (event: object): Delivery => {
    const body = JSON.stringify(event);
    return { headers: { 'content-type': 'application/json', 'stripe-signature': stripeSignature(body, CARD_WEBHOOK_SECRET, Math.floor(t.clock.nowMs() / 1000)) }, body };
  };
  /** invoice.payment_failed of a renewal invoice (Stripe's documented invoice shape, subscription in parent.subscription_details). */
  const paymentFailed = (f: ProviderFact, o: { invoiceCreated: Date; at: Date; attempt?: number }) =>
    sign(
      stripeEvent(
        'invoice.payment_failed',
        {
          id: `in_${f.ref}_${secs(o.invoiceCreated)}`,
          object: 'invoice',
          billing_reason: 'subscription_cycle',
          status: 'open',
          paid: false,
          attempted: true,
          attempt_count: o.attempt ?? 1,
          amount_due: 1500,
          amount_paid: 0,
          currency: 'usd',
          created: secs(o.invoiceCreated),
          next_payment_attempt: secs(o.at) + 3 * 86400,
          parent: { type: 'subscription_details', subscription_details: { subscription: f.ref, metadata: md(f) } },
          lines: { object: 'list', data: [{ id: 'il_1', period: { start: secs(o.invoiceCreated), end: secs(o.invoiceCreated) + 30 * 86400 }, metadata: {} }] },
        },
        { created: secs(o.at) },
      ),
    );
  /** invoice.paid of that same invoice, after a retry (or the member's new card) succeeded. */
  const invoicePaid = (f: ProviderFact, o: { invoiceCreated: Date; at: Date; periodEnd: Date }) =>
    sign(
      stripeEvent(
        'invoice.paid',
        {
          id: `in_${f.ref}_${secs(o.invoiceCreated)}`,
          object: 'invoice',
          billing_reason: 'subscription_cycle',
          status: 'paid',
          amount_paid: 1500,
          currency: 'usd',
          created: secs(o.invoiceCreated),
          parent: { type: 'subscription_details', subscription_details: { subscription: f.ref, metadata: md(f) } },
          lines: { object: 'list', data: [{ id: 'il_1', period: { start: secs(o.invoiceCreated), end: secs(o.periodEnd) }, metadata: {} }] },
        },
        { created: secs(o.at) },
      ),
    );
  /** customer.subscription.updated with what changed in previous_attributes. */
  const subscriptionUpdated = (f: ProviderFact, when: Date, now: Record<string, unknown>, previous: Record<string, unknown>) =>
    sign(
      stripeEvent(
        'customer.subscription.updated',
        { id: f.ref, object: 'subscription', status: 'active', cancel_at_period_end: false, pause_collection: null, current_period_end: secs(f.periodEnd), metadata: md(f), ...now },
        { created: secs(when), previous },
      ),
    );

  it('a failed renewal invoice: in grace for card_processor_grace_days after the invoice with the tier kept, on hold when the grace ends, recovered when the invoice is paid', async () => {
    const f = await subscribed(cardDriver);
    const failed = await send('card_processor', paymentFailed(f, { invoiceCreated: at(30), at: new Date(at(30).getTime() + 3600_000) }));
    expect(failed.outcomes).toEqual([{ outcome: 'status_changed', orderItemId: expect.any(Number), status: 'in_grace' }]);
    expect(await item(f, 'card_processor')).toMatchObject({ odi_subscription_status: 'in_grace', odi_subscription_grace_until: at(37) });
    expect(await tierOf(t, f.userId)).toBe(silver.tierId);
    expect(await summaryEntry(f.headers)).toMatchObject({ status: 'in_grace', grace_until: stamp(at(37)), billing_issue: true });
    const crud = await t.request({ method: 'GET', url: `/api/v1/OrderItem/${(await item(f, 'card_processor')).odi_order_item_id}`, headers: f.headers });
    expect(crud.json.data).toMatchObject({ odi_subscription_status: 'in_grace', odi_subscription_grace_until: stamp(at(37)) });

    // A retry of the same invoice fails again: the grace still counts from the invoice.
    await send('card_processor', paymentFailed(f, { invoiceCreated: at(30), at: at(33), attempt: 2 }));
    expect((await item(f, 'card_processor')).odi_subscription_grace_until).toEqual(at(37));

    t.clock.set(new Date(at(37).getTime() - 1000));
    expect(await runPeriodEnd()).toMatchObject({ grace_ended: 0 });
    expect(await tierOf(t, f.userId)).toBe(silver.tierId);
    t.clock.set(at(37));
    expect(await runPeriodEnd()).toMatchObject({ grace_ended: 1 });
    expect(await item(f, 'card_processor')).toMatchObject({ odi_subscription_status: 'on_hold', odi_subscription_grace_until: null });
    expect(await tierOf(t, f.userId)).toBeNull();
    expect(await summaryEntry(f.headers)).toMatchObject({ status: 'on_hold', grace_until: null, billing_issue: true });
    expect(await runPeriodEnd()).toMatchObject({ grace_ended: 0 });

    const paid = await send('card_processor', invoicePaid(f, { invoiceCreated: at(30), at: at(38), periodEnd: at(60) }));
    expect(paid.outcomes).toEqual([expect.objectContaining({ outcome: 'granted', grant: 'joined' })]);
    expect(await item(f, 'card_processor')).toMatchObject({ odi_subscription_status: 'active', odi_subscription_period_end: at(60) });
    expect(await tierOf(t, f.userId)).toBe(silver.tierId);
    expect(await summaryEntry(f.headers)).toMatchObject({ status: 'active', grace_until: null, billing_issue: false });
    expect(await statusTrail(f.userId)).toEqual(['active>in_grace:in_grace', 'in_grace>on_hold:on_hold', 'on_hold>active:recovered']);
    const tier = String(silver.tierId);
    expect(await tierTrail(f.userId)).toEqual([`purchase:null>${tier}`, `on_hold:${tier}>null`, `recovery:null>${tier}`]);
  });

  it('the subscription going past_due is in grace (card_processor_grace_days from then), unpaid is on hold, back to active recovers', async () => {
    await t.services.settings.set('card_processor_grace_days', 3);
    const f = await subscribed(cardDriver);
    const pastDue = await send('card_processor', subscriptionUpdated(f, at(30), { status: 'past_due' }, { status: 'active' }));
    expect(pastDue.outcomes).toEqual([expect.objectContaining({ outcome: 'status_changed', status: 'in_grace' })]);
    expect((await item(f, 'card_processor')).odi_subscription_grace_until).toEqual(at(33));
    const unpaid = await send('card_processor', subscriptionUpdated(f, at(32), { status: 'unpaid' }, { status: 'past_due' }));
    expect(unpaid.outcomes).toEqual([expect.objectContaining({ outcome: 'removed', removedTierIds: [silver.tierId] })]);
    expect((await item(f, 'card_processor')).odi_subscription_status).toBe('on_hold');
    const active = await send('card_processor', subscriptionUpdated(f, at(34), { status: 'active' }, { status: 'unpaid' }));
    expect(active.outcomes).toEqual([expect.objectContaining({ outcome: 'granted', grant: 'joined' })]);
    expect((await item(f, 'card_processor')).odi_subscription_status).toBe('active');
    expect(await tierOf(t, f.userId)).toBe(silver.tierId);
    expect(await statusTrail(f.userId)).toEqual(['active>in_grace:in_grace', 'in_grace>on_hold:on_hold', 'on_hold>active:recovered']);
    // A status update that changes nothing about billing is not acted on.
    const same = await send('card_processor', subscriptionUpdated(f, at(35), { status: 'active', metadata: { ...md(f), note: 'x' } }, { metadata: md(f) }));
    expect(same).toMatchObject({ processed: false, outcomes: [] });
  });

  it('pause_collection pauses the subscription until its resumes_at with the tier removed; lifting it recovers', async () => {
    const f = await subscribed(cardDriver);
    const pause = { behavior: 'void', resumes_at: secs(at(45)) };
    const paused = await send('card_processor', subscriptionUpdated(f, at(10), { pause_collection: pause }, { pause_collection: null }));
    expect(paused.outcomes).toEqual([expect.objectContaining({ outcome: 'removed', removedTierIds: [silver.tierId] })]);
    expect(await item(f, 'card_processor')).toMatchObject({ odi_subscription_status: 'paused', odi_subscription_resume_time: at(45) });
    expect(await tierOf(t, f.userId)).toBeNull();
    expect(await summaryEntry(f.headers)).toMatchObject({ status: 'paused', grace_until: null, billing_issue: false });
    const resumed = await send('card_processor', subscriptionUpdated(f, at(45), { pause_collection: null }, { pause_collection: pause }));
    expect(resumed.outcomes).toEqual([expect.objectContaining({ outcome: 'granted', grant: 'joined' })]);
    expect(await item(f, 'card_processor')).toMatchObject({ odi_subscription_status: 'active', odi_subscription_resume_time: null });
    expect(await statusTrail(f.userId)).toEqual(['active>paused:paused', 'paused>active:recovered']);
  });

  it('a failure that arrives after a newer renewal is stale: the renewal stands', async () => {
    const f = await subscribed(cardDriver);
    await send('card_processor', invoicePaid(f, { invoiceCreated: at(30), at: at(31), periodEnd: at(60) }));
    const late = await send('card_processor', paymentFailed(f, { invoiceCreated: at(30), at: at(30) }));
    expect(late.outcomes).toEqual([{ outcome: 'stale', orderItemId: expect.any(Number) }]);
    expect(await item(f, 'card_processor')).toMatchObject({ odi_subscription_status: 'active', odi_subscription_grace_until: null });
    expect(await statusTrail(f.userId)).toEqual([]);
  });

  it('a failed first invoice (not a renewal) puts nothing in grace', async () => {
    const f = await subscribed(cardDriver);
    const body = JSON.parse((await paymentFailed(f, { invoiceCreated: at(0), at: at(0) })).body);
    body.data.object.billing_reason = 'subscription_create';
    const res = await send('card_processor', sign(body));
    expect(res).toMatchObject({ processed: false, outcomes: [] });
    expect((await item(f, 'card_processor')).odi_subscription_status).toBe('active');
  });
});

describe('wallet provider', () => {
  /** A PayPal event about the subscription resource (its documented Subscriptions v1 shape). */
  async function walletEvent(f: ProviderFact, type: string, o: { at: Date; status: string; statusUpdateTime?: Date; failedAt?: Date; failures?: number }) {
    const resource = {
      id: f.ref,
      plan_id: f.providerProductId,
      status: o.status,
      status_update_time: (o.statusUpdateTime ?? f.at).toISOString(),
      custom_id: await storeAccountToken(t.services.db, f.userId),
      billing_info: {
        outstanding_balance: { currency_code: 'USD', value: o.failedAt ? '15.00' : '0.00' },
        next_billing_time: f.periodEnd.toISOString(),
        failed_payments_count: o.failures ?? 0,
        ...(o.failedAt ? { last_failed_payment: { amount: { currency_code: 'USD', value: '15.00' }, time: o.failedAt.toISOString(), reason_code: 'PAYMENT_DENIED' } } : {}),
      },
    };
    const body = JSON.stringify({ id: uniqueRef('WH-'), event_version: '1.0', create_time: o.at.toISOString(), resource_type: 'subscription', resource_version: '2.0', event_type: type, summary: type, resource });
    return send('wallet_provider', signWallet(body, { key: wallet.cert, time: t.clock.now(), certBase: wallet.fake.base }));
  }
  const saleCompleted = (f: ProviderFact, when: Date, periodEnd: Date) =>
    send('wallet_provider', wallet.renewal(t, { ...f, at: when, periodEnd }));

  it('PAYMENT.FAILED: in grace for wallet_provider_grace_days from the first failure (a retry keeps it); SUSPENDED: on hold; a completed sale recovers', async () => {
    const f = await subscribed(wallet);
    const failed = await walletEvent(f, 'BILLING.SUBSCRIPTION.PAYMENT.FAILED', { at: at(30), status: 'ACTIVE', failedAt: at(30), failures: 1 });
    expect(failed.outcomes).toEqual([expect.objectContaining({ outcome: 'status_changed', status: 'in_grace' })]);
    expect(await item(f, 'wallet_provider')).toMatchObject({ odi_subscription_status: 'in_grace', odi_subscription_grace_until: at(40), odi_last_event_time: at(30) });
    expect(await summaryEntry(f.headers)).toMatchObject({ status: 'in_grace', grace_until: stamp(at(40)), billing_issue: true });
    await walletEvent(f, 'BILLING.SUBSCRIPTION.PAYMENT.FAILED', { at: at(33), status: 'ACTIVE', failedAt: at(33), failures: 2 });
    expect((await item(f, 'wallet_provider')).odi_subscription_grace_until).toEqual(at(40));
    expect(await tierOf(t, f.userId)).toBe(silver.tierId);

    const suspended = await walletEvent(f, 'BILLING.SUBSCRIPTION.SUSPENDED', { at: at(36), status: 'SUSPENDED', statusUpdateTime: at(36), failedAt: at(36), failures: 3 });
    expect(suspended.outcomes).toEqual([expect.objectContaining({ outcome: 'removed', removedTierIds: [silver.tierId] })]);
    expect((await item(f, 'wallet_provider')).odi_subscription_status).toBe('on_hold');
    expect(await tierOf(t, f.userId)).toBeNull();

    const sale = await saleCompleted(f, at(37), at(67));
    expect(sale.outcomes).toEqual([expect.objectContaining({ outcome: 'granted', grant: 'joined' })]);
    expect(await item(f, 'wallet_provider')).toMatchObject({ odi_subscription_status: 'active', odi_subscription_grace_until: null });
    expect(await tierOf(t, f.userId)).toBe(silver.tierId);
    expect(await statusTrail(f.userId)).toEqual(['active>in_grace:in_grace', 'in_grace>on_hold:on_hold', 'on_hold>active:recovered']);
  });

  it('grace over while the payment still fails: on hold by the period-end task; RE-ACTIVATED recovers', async () => {
    await t.services.settings.set('wallet_provider_grace_days', 2);
    const f = await subscribed(wallet);
    await walletEvent(f, 'BILLING.SUBSCRIPTION.PAYMENT.FAILED', { at: at(30), status: 'ACTIVE', failedAt: at(30), failures: 1 });
    expect((await item(f, 'wallet_provider')).odi_subscription_grace_until).toEqual(at(32));
    t.clock.set(at(32));
    expect(await runPeriodEnd()).toMatchObject({ grace_ended: 1 });
    expect(await tierOf(t, f.userId)).toBeNull();
    const back = await walletEvent(f, 'BILLING.SUBSCRIPTION.RE-ACTIVATED', { at: at(33), status: 'ACTIVE', statusUpdateTime: at(33) });
    expect(back.outcomes).toEqual([expect.objectContaining({ outcome: 'granted', grant: 'joined' })]);
    expect(await tierOf(t, f.userId)).toBe(silver.tierId);
    expect(await statusTrail(f.userId)).toEqual(['active>in_grace:in_grace', 'in_grace>on_hold:on_hold', 'on_hold>active:recovered']);
  });

  it('a subscription the member cancelled stays cancelled with its tier when it is suspended (our end-of-period cancel suspends it)', async () => {
    const f = await subscribed(wallet);
    await send('wallet_provider', wallet.cancelScheduled(t, { ...f, at: at(5) }));
    const suspended = await walletEvent(f, 'BILLING.SUBSCRIPTION.SUSPENDED', { at: at(6), status: 'SUSPENDED', statusUpdateTime: at(6) });
    expect(suspended.outcomes).toEqual([{ outcome: 'unchanged', orderItemId: expect.any(Number), status: 'cancelled' }]);
    expect((await item(f, 'wallet_provider')).odi_subscription_status).toBe('cancelled');
    expect(await tierOf(t, f.userId)).toBe(silver.tierId);
  });

  it('a failure dated before a newer renewal is stale (the failure\'s own create_time orders it, not the unchanged status time)', async () => {
    const f = await subscribed(wallet);
    await saleCompleted(f, at(31), at(61));
    const late = await walletEvent(f, 'BILLING.SUBSCRIPTION.PAYMENT.FAILED', { at: at(30), status: 'ACTIVE', statusUpdateTime: at(0), failedAt: at(30), failures: 1 });
    expect(late.outcomes).toEqual([{ outcome: 'stale', orderItemId: expect.any(Number) }]);
    expect((await item(f, 'wallet_provider')).odi_subscription_status).toBe('active');
    // A failure after that renewal applies, though the subscription's status time is older than the renewal.
    const next = await walletEvent(f, 'BILLING.SUBSCRIPTION.PAYMENT.FAILED', { at: at(61), status: 'ACTIVE', statusUpdateTime: at(0), failedAt: at(61), failures: 1 });
    expect(next.outcomes).toEqual([expect.objectContaining({ outcome: 'status_changed', status: 'in_grace' })]);
    expect(await item(f, 'wallet_provider')).toMatchObject({ odi_subscription_status: 'in_grace', odi_last_event_time: at(61), odi_subscription_grace_until: at(71) });
  });
});

describe('iOS store', () => {
  it('DID_FAIL_TO_RENEW GRACE_PERIOD: in grace until the renewal info\'s gracePeriodExpiresDate; GRACE_PERIOD_EXPIRED: on hold; DID_RENEW BILLING_RECOVERY recovers', async () => {
    const f = await subscribed(ios);
    const grace = await send('ios_store', ios.notify(t, { ...f, at: at(30) }, 'DID_FAIL_TO_RENEW', 'GRACE_PERIOD', undefined, { renewal: { gracePeriodExpiresDate: at(46).getTime(), isInBillingRetryPeriod: true } }));
    expect(grace.outcomes).toEqual([expect.objectContaining({ outcome: 'status_changed', status: 'in_grace' })]);
    expect(await item(f, 'ios_store')).toMatchObject({ odi_subscription_status: 'in_grace', odi_subscription_grace_until: at(46), odi_subscription_period_end: at(30) });
    expect(await tierOf(t, f.userId)).toBe(silver.tierId);
    const expired = await send('ios_store', ios.notify(t, { ...f, at: at(46) }, 'GRACE_PERIOD_EXPIRED'));
    expect(expired.outcomes).toEqual([expect.objectContaining({ outcome: 'removed', removedTierIds: [silver.tierId] })]);
    expect((await item(f, 'ios_store')).odi_subscription_status).toBe('on_hold');
    const recovered = await send('ios_store', ios.notify(t, { ...f, at: at(50), periodEnd: at(80) }, 'DID_RENEW', 'BILLING_RECOVERY'));
    expect(recovered.outcomes).toEqual([expect.objectContaining({ outcome: 'granted', grant: 'joined' })]);
    expect(await item(f, 'ios_store')).toMatchObject({ odi_subscription_status: 'active', odi_subscription_period_end: at(80) });
    expect(await statusTrail(f.userId)).toEqual(['active>in_grace:in_grace', 'in_grace>on_hold:on_hold', 'on_hold>active:recovered']);
  });

  it('DID_FAIL_TO_RENEW without a subtype holds the account at once; a later DID_RENEW recovers it', async () => {
    const f = await subscribed(ios);
    const held = await send('ios_store', ios.notify(t, { ...f, at: at(30) }, 'DID_FAIL_TO_RENEW'));
    expect(held.outcomes).toEqual([expect.objectContaining({ outcome: 'removed', removedTierIds: [silver.tierId] })]);
    expect(await summaryEntry(f.headers)).toMatchObject({ status: 'on_hold', billing_issue: true, grace_until: null });
    const renewed = await send('ios_store', ios.renewal(t, { ...f, at: at(32), periodEnd: at(62) }));
    expect(renewed.outcomes).toEqual([expect.objectContaining({ outcome: 'granted', grant: 'joined' })]);
    expect(await statusTrail(f.userId)).toEqual(['active>on_hold:on_hold', 'on_hold>active:recovered']);
  });

  it('a grace notification that arrives before its purchase waits for it, then applies with its grace end', async () => {
    const { headers, userId } = await t.keyHeaders();
    const providerProductId = uniqueRef('ios-silver-');
    const productId = await createProduct(t, { tierId: silver.tierId, refs: { pro_ios_product_id: providerProductId } });
    const f = { userId, productId, providerProductId, ref: uniqueRef('sub'), at: at(0), periodEnd: at(30) };
    const early = await send('ios_store', ios.notify(t, { ...f, at: at(30) }, 'DID_FAIL_TO_RENEW', 'GRACE_PERIOD', undefined, { renewal: { gracePeriodExpiresDate: at(46).getTime() } }));
    expect(early.outcomes).toEqual([{ outcome: 'pending', references: [f.ref] }]);
    const bought = await send('ios_store', ios.purchase(t, f));
    expect(bought.outcomes).toEqual([
      expect.objectContaining({ outcome: 'granted', grant: 'joined' }),
      expect.objectContaining({ outcome: 'pending_applied', result: expect.objectContaining({ outcome: 'status_changed', status: 'in_grace' }) }),
    ]);
    expect(await item(f, 'ios_store')).toMatchObject({ odi_subscription_status: 'in_grace', odi_subscription_grace_until: at(46) });
    expect(await summaryEntry(headers)).toMatchObject({ status: 'in_grace', grace_until: stamp(at(46)), billing_issue: true });
  });

  it('a grace notification signed before a newer renewal is stale', async () => {
    const f = await subscribed(ios);
    await send('ios_store', ios.renewal(t, { ...f, at: at(31), periodEnd: at(61) }));
    const late = await send('ios_store', ios.notify(t, { ...f, at: at(30) }, 'DID_FAIL_TO_RENEW', 'GRACE_PERIOD', undefined, { renewal: { gracePeriodExpiresDate: at(46).getTime() } }));
    expect(late.outcomes).toEqual([{ outcome: 'stale', orderItemId: expect.any(Number) }]);
    expect((await item(f, 'ios_store')).odi_subscription_status).toBe('active');
  });
});

describe('Android store', () => {
  it('SUBSCRIPTION_IN_GRACE_PERIOD: in grace until the line item\'s expiry; SUBSCRIPTION_ON_HOLD: on hold; SUBSCRIPTION_RECOVERED recovers', async () => {
    const f = await subscribed(android);
    const grace = await send('android_store', android.pushState(t, { ...f, periodEnd: at(37) }, 'SUBSCRIPTION_STATE_IN_GRACE_PERIOD', 6));
    expect(grace.outcomes).toEqual([expect.objectContaining({ outcome: 'status_changed', status: 'in_grace' })]);
    // The failed renewal was due at the recorded period end: that is the event's time.
    expect(await item(f, 'android_store')).toMatchObject({ odi_subscription_status: 'in_grace', odi_subscription_grace_until: at(37), odi_subscription_period_end: at(30), odi_last_event_time: at(30) });
    expect(await tierOf(t, f.userId)).toBe(silver.tierId);
    const hold = await send('android_store', android.pushState(t, { ...f, periodEnd: at(30) }, 'SUBSCRIPTION_STATE_ON_HOLD', 5));
    expect(hold.outcomes).toEqual([expect.objectContaining({ outcome: 'removed', removedTierIds: [silver.tierId] })]);
    const recovered = await send('android_store', android.pushState(t, { ...f, periodEnd: at(70) }, 'SUBSCRIPTION_STATE_ACTIVE', 1));
    expect(recovered.outcomes).toEqual([expect.objectContaining({ outcome: 'granted', grant: 'joined' })]);
    expect(await item(f, 'android_store')).toMatchObject({ odi_subscription_status: 'active', odi_subscription_period_end: at(70), odi_subscription_grace_until: null });
    expect(await statusTrail(f.userId)).toEqual(['active>in_grace:in_grace', 'in_grace>on_hold:on_hold', 'on_hold>active:recovered']);
  });

  it('a SUBSCRIPTION_RENEWED during grace recovers it with the tier kept', async () => {
    const f = await subscribed(android);
    await send('android_store', android.pushState(t, { ...f, periodEnd: at(37) }, 'SUBSCRIPTION_STATE_IN_GRACE_PERIOD', 6));
    const renewed = await send('android_store', android.pushState(t, { ...f, periodEnd: at(60) }, 'SUBSCRIPTION_STATE_ACTIVE', 2));
    expect(renewed.outcomes).toEqual([expect.objectContaining({ outcome: 'granted', grant: 'renewed' })]);
    expect((await item(f, 'android_store')).odi_subscription_status).toBe('active');
    expect(await statusTrail(f.userId)).toEqual(['active>in_grace:in_grace', 'in_grace>active:recovered']);
    expect((await tierTrail(f.userId)).at(-1)).toBe(`recovery:${silver.tierId}>${silver.tierId}`);
  });

  it('SUBSCRIPTION_PAUSED: paused until the stated auto-resume time with the tier removed; SUBSCRIPTION_RESTARTED recovers', async () => {
    const f = await subscribed(android);
    const paused = await send('android_store', android.pushState(t, f, 'SUBSCRIPTION_STATE_PAUSED', 10, { pausedStateContext: { autoResumeTime: at(60).toISOString() } }));
    expect(paused.outcomes).toEqual([expect.objectContaining({ outcome: 'removed', removedTierIds: [silver.tierId] })]);
    expect(await item(f, 'android_store')).toMatchObject({ odi_subscription_status: 'paused', odi_subscription_resume_time: at(60) });
    const restarted = await send('android_store', android.pushState(t, f, 'SUBSCRIPTION_STATE_ACTIVE', 7));
    expect(restarted.outcomes).toEqual([expect.objectContaining({ outcome: 'granted', grant: 'joined' })]);
    expect(await tierOf(t, f.userId)).toBe(silver.tierId);
    expect(await statusTrail(f.userId)).toEqual(['active>paused:paused', 'paused>active:recovered']);
  });

  it('a grace push that the Play API no longer confirms (it renewed since) changes nothing', async () => {
    const f = await subscribed(android);
    const late = await send('android_store', android.pushState(t, { ...f, periodEnd: at(60) }, 'SUBSCRIPTION_STATE_ACTIVE', 6));
    expect(late).toMatchObject({ processed: false, outcomes: [] });
    expect((await item(f, 'android_store')).odi_subscription_status).toBe('active');
    expect(await statusTrail(f.userId)).toEqual([]);
  });
});
