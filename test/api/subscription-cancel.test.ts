import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { LifecycleFixture, PERIOD_END, type Source } from '../helpers/lifecycle.js';
import { insertSubscription, orderItem } from '../helpers/subscriptions.js';
import { changeRows, tierMemberships } from '../helpers/tiers.js';

describe('cancel and reactivate through orders_recurring_action', () => {
  const f = new LifecycleFixture();
  beforeAll(async () => void (await f.start()));
  afterAll(async () => f.stop());
  beforeEach(async () => f.reset());

  const cancel = (headers: Record<string, string>, id: number) => f.action('orders_recurring_action', headers, { order_item_id: id, recurring_action: 'cancel' });
  const reactivate = (headers: Record<string, string>, id: number) => f.action('orders_recurring_action', headers, { order_item_id: id, recurring_action: 'reactivate' });
  const set = (name: string, value: unknown) => f.t.services.settings.set(name, value);
  const providerCalls = () => [...f.stripe.calls, ...f.paypal.calls.filter((c) => c.path !== '/v1/oauth2/token')];

  async function expectRefused(res: Awaited<ReturnType<typeof cancel>>, reason: string) {
    expect(res.statusCode).toBe(422);
    expect(res.json.errortype).toBe('ActionError');
    expect(res.json.data.reason).toBe(reason);
    expect(typeof res.json.error).toBe('string');
    expect(res.json.error.length).toBeGreaterThan(10);
  }

  describe('cancel at end of period (subscription_cancellation_timing end_of_period)', () => {
    it('card: the provider is told to cancel at period end; access lasts to the period end', async () => {
      const s = await f.subscriber('card_processor', f.plans.silver);
      const res = await cancel(s.headers, s.id);
      expect(res.statusCode).toBe(200);
      expect(res.json.data).toEqual({ order_item_id: s.id, status: 'cancelled', timing: 'end_of_period', end_date: '2026-03-31 00:00:00', refund_amount: null, currency: 'usd', cancelled: true });
      expect(res.json.success_message).toBe('Your subscription has been cancelled; you keep access until 2026-03-31 00:00:00.');
      const calls = f.stripe.calls.filter((c) => c.path === `/v1/subscriptions/${s.ref}`);
      expect(calls.map((c) => [c.method, c.body?.cancel_at_period_end])).toEqual([['POST', 'true']]);
      expect(f.stripe.callsTo('POST', '/v1/refunds')).toHaveLength(0);
      const item = await orderItem(f.t, s.id);
      expect(item.odi_subscription_status).toBe('cancelled');
      expect(item.odi_subscription_cancel_at_period_end).toBe(true);
      expect(await f.tierOf(s.userId)).toBe('silver');
      expect((await tierMemberships(f.t, s.userId))[0]!.grm_subscription_status).toBe('cancelled');
      const summary = await f.action('subscription_summary', s.headers, {});
      expect(summary.json.data.subscriptions[0]).toMatchObject({ order_item_id: s.id, status: 'cancelled', renewal_or_end_date: '2026-03-31 00:00:00', can_cancel: false });
    });

    it('wallet: billing is suspended at the provider', async () => {
      const s = await f.subscriber('wallet_provider', f.plans.silver);
      const res = await cancel(s.headers, s.id);
      expect(res.statusCode).toBe(200);
      expect(res.json.data.status).toBe('cancelled');
      expect(f.paypal.callsTo('POST', '/v1/billing/subscriptions/').map((c) => c.path)).toEqual([`/v1/billing/subscriptions/${s.ref}/suspend`]);
      expect(f.paypal.subscriptions.get(s.ref)!.status).toBe('SUSPENDED');
      expect(await f.tierOf(s.userId)).toBe('silver');
    });
  });

  describe('immediate cancellation (subscription_cancellation_timing immediate)', () => {
    beforeEach(async () => set('subscription_cancellation_timing', 'immediate'));

    it('card, proration off: cancelled now at the provider, no refund, removed from every tier', async () => {
      const s = await f.subscriber('card_processor', f.plans.silver);
      const res = await cancel(s.headers, s.id);
      expect(res.statusCode).toBe(200);
      expect(res.json.data).toEqual({ order_item_id: s.id, status: 'expired', timing: 'immediate', end_date: '2026-03-01 12:00:00', refund_amount: null, currency: 'usd', cancelled: true });
      expect(f.stripe.calls.map((c) => `${c.method} ${c.path}`)).toEqual([`DELETE /v1/subscriptions/${s.ref}`]);
      const item = await orderItem(f.t, s.id);
      expect(item.odi_subscription_status).toBe('expired');
      expect(item.odi_refund_amount).toBeNull();
      expect(await f.tierOf(s.userId)).toBeNull();
      const last = (await changeRows(f.t, s.userId)).at(-1)!;
      expect(last).toMatchObject({ cht_change_reason: 'cancellation', cht_old_value: String(f.plans.silver.tier.tierId), cht_new_value: null, cht_reference_type: 'order_item' });
      expect(Number(last.cht_reference_id)).toBe(s.id);
      expect((await f.action('subscription_summary', s.headers, {})).json.data).toMatchObject({ subscriptions: [], current_tier: null, payment_source: 'none' });
    });

    it('card, proration on: the unused part is refunded exactly in minor units and recorded on the order item', async () => {
      await set('subscription_cancellation_prorate', true);
      const s = await f.subscriber('card_processor', f.plans.silver);
      // 29.5 of 30 days unused of 3000 cents
      const res = await cancel(s.headers, s.id);
      expect(res.statusCode).toBe(200);
      expect(res.json.data).toMatchObject({ status: 'refunded', timing: 'immediate', refund_amount: 2950 });
      // the refund first, then the cancel (DESIGN 14)
      expect(f.stripe.calls.map((c) => `${c.method} ${c.path}`)).toEqual(['POST /v1/refunds', `DELETE /v1/subscriptions/${s.ref}`]);
      expect(f.stripe.callsTo('POST', '/v1/refunds')[0]!.body).toMatchObject({ payment_intent: s.payment, amount: '2950' });
      const item = await orderItem(f.t, s.id);
      expect(Number(item.odi_refund_amount)).toBe(2950);
      expect(item.odi_subscription_status).toBe('refunded');
      expect(await f.tierOf(s.userId)).toBeNull();
    });

    it('wallet, proration on: cancelled at the provider and the capture refunded in its currency', async () => {
      await set('subscription_cancellation_prorate', true);
      f.t.clock.set('2026-03-21T00:00:00Z'); // 10 of 30 days unused of 3000 cents
      const s = await f.subscriber('wallet_provider', f.plans.silver);
      const res = await cancel(s.headers, s.id);
      expect(res.statusCode).toBe(200);
      expect(res.json.data.refund_amount).toBe(1000);
      expect(f.paypal.subscriptions.get(s.ref)!.status).toBe('CANCELLED');
      const refund = f.paypal.callsTo('POST', `/v2/payments/captures/${s.payment}/refund`);
      expect(refund).toHaveLength(1);
      expect(refund[0]!.body).toEqual({ amount: { value: '10.00', currency_code: 'USD' } });
      expect(await f.tierOf(s.userId)).toBeNull();
    });

    it('card, proration on, no payment on the order (a subscription checkout records none): the refund goes to the latest paid invoice', async () => {
      await set('subscription_cancellation_prorate', true);
      const s = await f.subscriber('card_processor', f.plans.silver, { paymentOnRecord: false });
      const invoice = f.stripe.payInvoice(s.ref, `pi_invoice_${s.id}`);
      const res = await cancel(s.headers, s.id);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json.data).toMatchObject({ status: 'refunded', refund_amount: 2950 });
      expect(f.stripe.calls.map((c) => `${c.method} ${c.path}`)).toEqual([
        `GET /v1/subscriptions/${s.ref}`,
        'GET /v1/invoice_payments',
        'POST /v1/refunds',
        `DELETE /v1/subscriptions/${s.ref}`,
      ]);
      expect(f.stripe.invoicePayments.get(invoice)!.payment.payment_intent).toBe(`pi_invoice_${s.id}`);
      expect(f.stripe.callsTo('POST', '/v1/refunds')[0]!.body).toMatchObject({ payment_intent: `pi_invoice_${s.id}`, amount: '2950', metadata: { order_item_id: String(s.id) } });
      expect(Number((await orderItem(f.t, s.id)).odi_refund_amount)).toBe(2950);
      expect(await f.tierOf(s.userId)).toBeNull();
    });

    it('wallet, proration on, no payment on the order: the subscription’s newest completed payment is refunded', async () => {
      await set('subscription_cancellation_prorate', true);
      f.t.clock.set('2026-03-21T00:00:00Z'); // 10 of 30 days unused of 3000 cents
      const s = await f.subscriber('wallet_provider', f.plans.silver, { paymentOnRecord: false });
      f.paypal.addPayment(s.ref, { id: `TX-OLD-${s.id}`, time: new Date('2026-02-01T00:00:00Z') });
      f.paypal.addPayment(s.ref, { id: `TX-FAILED-${s.id}`, time: new Date('2026-03-02T00:00:00Z'), status: 'DECLINED' });
      f.paypal.addPayment(s.ref, { id: `TX-NEW-${s.id}`, time: new Date('2026-03-01T00:00:00Z') });
      const res = await cancel(s.headers, s.id);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json.data).toMatchObject({ status: 'refunded', refund_amount: 1000 });
      expect(f.paypal.callsTo('GET', `/v1/billing/subscriptions/${s.ref}/transactions`)).toHaveLength(1);
      expect(f.paypal.callsTo('POST', '/v2/payments/captures/').map((c) => [c.path, c.body])).toEqual([
        [`/v2/payments/captures/TX-NEW-${s.id}/refund`, { amount: { value: '10.00', currency_code: 'USD' } }],
      ]);
      expect(f.paypal.subscriptions.get(s.ref)!.status).toBe('CANCELLED');
      expect(await f.tierOf(s.userId)).toBeNull();
    });

    it('proration on but no paid payment to refund at the provider: 502, nothing cancelled there or here', async () => {
      await set('subscription_cancellation_prorate', true);
      for (const source of ['card_processor', 'wallet_provider'] as const) {
        const s = await f.subscriber(source, f.plans.silver, { paymentOnRecord: false });
        const res = await cancel(s.headers, s.id);
        expect(res.statusCode).toBe(502);
        expect(res.json).toMatchObject({ errortype: 'ActionError', data: { reason: 'provider_unavailable', payment_source: source } });
        expect(f.stripe.callsTo('DELETE', '/v1/subscriptions/')).toHaveLength(0);
        expect(f.paypal.callsTo('POST', '/v1/billing/subscriptions/')).toHaveLength(0);
        expect((await orderItem(f.t, s.id)).odi_subscription_status).toBe('active');
        expect(await f.tierOf(s.userId)).toBe('silver');
      }
    });

    it('after renewals, the refund is of the current period only', async () => {
      await set('subscription_cancellation_prorate', true);
      const s = await f.subscriber('card_processor', f.plans.silver);
      // renewed twice: the recorded start is two periods back, the current period is Mar 1 to Apr 1 (31 days)
      await (f.t.services.db as any)
        .updateTable('odi_order_items')
        .set({ odi_subscription_period_start: new Date('2026-01-01T00:00:00Z'), odi_subscription_period_end: new Date('2026-04-01T00:00:00Z') })
        .where('odi_order_item_id', '=', s.id)
        .execute();
      f.t.clock.set('2026-03-16T12:00:00Z'); // 15.5 of 31 days unused of 3000 cents
      const res = await cancel(s.headers, s.id);
      expect(res.json.data.refund_amount).toBe(1500);
      expect(f.stripe.callsTo('POST', '/v1/refunds')[0]!.body.amount).toBe('1500');
    });

    it('cancelling a second source’s flagged purchase takes no tier away, and the summary names the tier-bearing source', async () => {
      const s = await f.subscriber('card_processor', f.plans.silver);
      const flagged = await insertSubscription(f.t, s.userId, f.plans.gold.productId, {
        source: 'wallet_provider',
        price: 6000,
        periodStart: new Date('2026-03-01T06:00:00Z'),
        periodEnd: PERIOD_END,
        extra: { odi_subscription_reference: `I-FLAGGED-${s.id}`, odi_source_conflict_time: new Date('2026-03-01T06:00:00Z') },
      });
      f.paypal.addSubscription({ id: `I-FLAGGED-${s.id}`, plan_id: 'P-GOLD' });
      expect((await f.action('subscription_summary', s.headers, {})).json.data.payment_source).toBe('card_processor');
      const res = await cancel(s.headers, flagged);
      expect(res.statusCode).toBe(200);
      expect(res.json.data.status).toBe('expired');
      expect(await f.tierOf(s.userId)).toBe('silver');
      expect((await changeRows(f.t, s.userId)).filter((r) => r.cht_change_reason === 'cancellation')).toHaveLength(0);
    });

    it('wallet, proration off: cancelled now, no refund', async () => {
      const s = await f.subscriber('wallet_provider', f.plans.gold);
      expect((await cancel(s.headers, s.id)).json.data).toMatchObject({ status: 'expired', refund_amount: null });
      expect(f.paypal.callsTo('POST', '/v2/payments')).toHaveLength(0);
      expect(f.paypal.subscriptions.get(s.ref)!.status).toBe('CANCELLED');
      expect(await f.tierOf(s.userId)).toBeNull();
    });
  });

  describe('cancel refusals leave state unchanged and call no provider', () => {
    async function unchanged(s: { id: number; userId: number }, status: string, tier: string | null) {
      expect((await orderItem(f.t, s.id)).odi_subscription_status).toBe(status);
      expect(await f.tierOf(s.userId)).toBe(tier);
      expect(providerCalls()).toEqual([]);
    }

    it('refuses while subscription_cancellation_enabled is off (both timings)', async () => {
      await set('subscription_cancellation_enabled', false);
      for (const timing of ['end_of_period', 'immediate']) {
        await set('subscription_cancellation_timing', timing);
        const s = await f.subscriber('card_processor', f.plans.silver);
        await expectRefused(await cancel(s.headers, s.id), 'cancellation_disabled');
        await unchanged(s, 'active', 'silver');
      }
    });

    it('refuses while the store is inactive', async () => {
      const s = await f.subscriber('card_processor', f.plans.silver);
      await set('subscriptions_active', false);
      await expectRefused(await cancel(s.headers, s.id), 'store_inactive');
      await unchanged(s, 'active', 'silver');
    });

    it('refuses an unknown order item and another member’s subscription alike', async () => {
      const mine = await f.subscriber('card_processor', f.plans.silver);
      const theirs = await f.subscriber('card_processor', f.plans.gold);
      await expectRefused(await cancel(mine.headers, 999_999), 'no_subscription');
      const res = await cancel(mine.headers, theirs.id);
      await expectRefused(res, 'no_subscription');
      await unchanged(theirs, 'active', 'gold');
    });

    it('refuses an already cancelled subscription and an ended one', async () => {
      const s = await f.subscriber('card_processor', f.plans.silver);
      expect((await cancel(s.headers, s.id)).statusCode).toBe(200);
      f.stripe.calls.length = 0;
      await expectRefused(await cancel(s.headers, s.id), 'already_cancelled');
      await unchanged(s, 'cancelled', 'silver');
      const ended = await f.subscriber('card_processor', f.plans.silver, { status: 'expired' });
      await expectRefused(await cancel(ended.headers, ended.id), 'expired');
    });

    it('refuses store-billed subscriptions with a message pointing to the store', async () => {
      for (const [source, store] of [
        ['ios_store', 'the App Store'],
        ['android_store', 'Google Play'],
      ] as Array<[Source, string]>) {
        const s = await f.subscriber(source, f.plans.silver);
        const res = await cancel(s.headers, s.id);
        await expectRefused(res, 'store_billed');
        expect(res.json.data.payment_source).toBe(source);
        expect(res.json.error).toContain(store);
        await unchanged(s, 'active', 'silver');
      }
    });

    it('a provider failure is a 502 that changes nothing', async () => {
      await set('subscription_cancellation_timing', 'immediate');
      const s = await f.subscriber('card_processor', f.plans.silver);
      f.stripe.subscriptions.delete(s.ref);
      const res = await cancel(s.headers, s.id);
      expect(res.statusCode).toBe(502);
      expect(res.json).toMatchObject({ errortype: 'ActionError', data: { reason: 'provider_unavailable', payment_source: 'card_processor' } });
      expect((await orderItem(f.t, s.id)).odi_subscription_status).toBe('active');
      expect(await f.tierOf(s.userId)).toBe('silver');
    });

    it('validates the recurring action', async () => {
      const s = await f.subscriber('card_processor', f.plans.silver);
      const res = await f.action('orders_recurring_action', s.headers, { order_item_id: s.id, recurring_action: 'pause' });
      expect(res.statusCode).toBe(422);
      expect(res.json.errortype).toBe('ValidationError');
      expect(Object.keys(res.json.validation_errors)).toEqual(['recurring_action']);
    });
  });

  describe('reactivate', () => {
    it('card: a cancelled subscription is resumed at the provider before it ends', async () => {
      const s = await f.subscriber('card_processor', f.plans.silver);
      await cancel(s.headers, s.id);
      f.stripe.calls.length = 0;
      f.t.clock.set('2026-03-30T23:59:59Z');
      const res = await reactivate(s.headers, s.id);
      expect(res.statusCode).toBe(200);
      expect(res.json.data).toEqual({ order_item_id: s.id, status: 'active', renewal_date: '2026-03-31 00:00:00' });
      expect(f.stripe.calls.map((c) => [c.method, c.path, c.body?.cancel_at_period_end])).toEqual([['POST', `/v1/subscriptions/${s.ref}`, 'false']]);
      const item = await orderItem(f.t, s.id);
      expect(item).toMatchObject({ odi_subscription_status: 'active', odi_subscription_cancel_at_period_end: false, odi_subscription_cancelled_time: null });
      expect((await tierMemberships(f.t, s.userId))[0]!.grm_subscription_status).toBe('active');
      expect((await f.action('subscription_summary', s.headers, {})).json.data.subscriptions[0]).toMatchObject({ status: 'active', can_cancel: true });
    });

    it('wallet: billing is re-activated at the provider', async () => {
      const s = await f.subscriber('wallet_provider', f.plans.silver);
      await cancel(s.headers, s.id);
      expect((await reactivate(s.headers, s.id)).statusCode).toBe(200);
      expect(f.paypal.subscriptions.get(s.ref)!.status).toBe('ACTIVE');
      expect(f.paypal.callsTo('POST', `/v1/billing/subscriptions/${s.ref}/activate`)).toHaveLength(1);
    });

    it('is refused once the paid period has ended, while reactivation is off, and for an active subscription', async () => {
      const s = await f.subscriber('card_processor', f.plans.silver);
      await expectRefused(await reactivate(s.headers, s.id), 'not_cancelled');
      await cancel(s.headers, s.id);
      f.stripe.calls.length = 0;
      await set('subscription_reactivation_enabled', false);
      await expectRefused(await reactivate(s.headers, s.id), 'reactivation_disabled');
      await set('subscription_reactivation_enabled', true);
      f.t.clock.set(PERIOD_END);
      await expectRefused(await reactivate(s.headers, s.id), 'expired');
      expect((await orderItem(f.t, s.id)).odi_subscription_status).toBe('cancelled');
      expect(providerCalls()).toEqual([]);
    });

    it('is refused for store-billed subscriptions', async () => {
      const s = await f.subscriber('ios_store', f.plans.silver, { status: 'cancelled' });
      const res = await reactivate(s.headers, s.id);
      await expectRefused(res, 'store_billed');
      expect(res.json.error).toContain('App Store');
    });
  });
});
