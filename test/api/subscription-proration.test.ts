import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { LifecycleFixture } from '../helpers/lifecycle.js';
import { orderItem } from '../helpers/subscriptions.js';

/**
 * DESIGN 14, proration (card processor, our own changes), against a fake processor that prorates a price
 * change to the second and refuses to refund more than is left of a payment, as the processor does.
 * Periods: March 1 to March 31 (30 days); silver 30.00, gold 60.00 a month.
 */
describe('proration: an upgrade is charged now, a cancel refunds what was paid, refund before cancel', () => {
  const f = new LifecycleFixture();
  beforeAll(async () => void (await f.start()));
  afterAll(async () => f.stop());
  beforeEach(async () => {
    await f.reset();
    await f.t.services.settings.set('subscription_cancellation_timing', 'immediate');
    await f.t.services.settings.set('subscription_cancellation_prorate', true);
  });

  const cancel = (headers: Record<string, string>, id: number) => f.action('orders_recurring_action', headers, { order_item_id: id, recurring_action: 'cancel' });
  const payments = (id: number) =>
    f.t.services.db.selectFrom('sbp_subscription_payments').selectAll().where('sbp_odi_order_item_id', '=', id).orderBy('sbp_subscription_payment_id').execute();
  const refunds = () => f.stripe.callsTo('POST', '/v1/refunds').map((c) => [c.body.payment_intent, c.body.amount]);

  it('an upgrade charges the prorated difference at once (always_invoice) and records that payment', async () => {
    const s = await f.subscriber('card_processor', f.plans.silver);
    f.t.clock.set('2026-03-11T00:00:00Z'); // 20 of 30 days left: 60.00 x 2/3 - 30.00 x 2/3 = 20.00
    const res = await f.action('change_tier', s.headers, { product_id: f.plans.gold.productId });
    expect(res.statusCode, res.body).toBe(200);
    expect(f.stripe.callsTo('POST', `/v1/subscriptions/${s.ref}`)[0]!.body).toMatchObject({ proration_behavior: 'always_invoice', payment_behavior: 'error_if_incomplete' });
    expect(f.stripe.pendingInvoiceItems.filter((p) => p.subscription === s.ref)).toEqual([]);
    const invoice = f.stripe.subscriptions.get(s.ref)!.latest_invoice!;
    expect(f.stripe.invoiceAmounts.get(invoice)).toBe(2000);
    const rows = await payments(s.id);
    expect(rows.map((r) => [r.sbp_kind, Number(r.sbp_amount), r.sbp_invoice_reference, r.sbp_covers_from.toISOString()])).toEqual([
      ['period', 3000, null, '2026-03-01T00:00:00.000Z'],
      ['upgrade', 2000, invoice, '2026-03-11T00:00:00.000Z'],
    ]);
    // the period's own payment was kept before the change made the upgrade invoice the latest
    expect(rows[0]!.sbp_payment_reference).toBe(s.payment);
    expect(rows[1]!.sbp_payment_reference).toBe(f.stripe.invoicePayments.get(invoice)!.payment.payment_intent);
  });

  it('an immediate prorated cancel right after an upgrade refunds each payment its unused share, never more than it paid', async () => {
    const s = await f.subscriber('card_processor', f.plans.silver);
    f.t.clock.set('2026-03-11T00:00:00Z');
    expect((await f.action('change_tier', s.headers, { product_id: f.plans.gold.productId })).statusCode).toBe(200);
    const upgradePayment = f.stripe.invoicePayments.get(f.stripe.subscriptions.get(s.ref)!.latest_invoice!)!.payment.payment_intent;
    f.stripe.calls.length = 0;
    // 20 of 30 days unused: 30.00 x 20/30 of the period's payment and all 20.00 of the upgrade's (it
    // paid for those same 20 days); a single refund of 60.00 x 20/30 = 40.00 of the 30.00 payment is refused
    const res = await cancel(s.headers, s.id);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json.data).toMatchObject({ status: 'refunded', refund_amount: 4000, cancelled: true });
    expect(refunds()).toEqual([
      [s.payment, '2000'],
      [upgradePayment, '2000'],
    ]);
    expect(f.stripe.calls.map((c) => `${c.method} ${c.path}`)).toEqual(['POST /v1/refunds', 'POST /v1/refunds', `DELETE /v1/subscriptions/${s.ref}`]);
    expect(Number((await orderItem(f.t, s.id)).odi_refund_amount)).toBe(4000);
    expect((await payments(s.id)).map((r) => Number(r.sbp_refunded_amount))).toEqual([2000, 2000]);
    expect(await f.tierOf(s.userId)).toBeNull();
  });

  it('later in the period the refund is the unused share of what was paid (not the new price for the whole period)', async () => {
    const s = await f.subscriber('card_processor', f.plans.silver);
    f.t.clock.set('2026-03-11T00:00:00Z');
    await f.action('change_tier', s.headers, { product_id: f.plans.gold.productId });
    f.t.clock.set('2026-03-26T00:00:00Z'); // 5 days left: 30.00 x 5/30 = 5.00 and 20.00 x 5/20 = 5.00
    const res = await cancel(s.headers, s.id);
    expect(res.json.data.refund_amount).toBe(1000);
    expect(refunds().map(([, amount]) => amount)).toEqual(['500', '500']);
  });

  it('a refund the processor refuses cancels nothing anywhere: 502 provider_unavailable', async () => {
    const s = await f.subscriber('card_processor', f.plans.silver);
    f.stripe.refuseRefunds = { status: 400, code: 'charge_disputed', message: 'This charge is disputed and cannot be refunded.' };
    const res = await cancel(s.headers, s.id);
    expect(res.statusCode).toBe(502);
    expect(res.json).toMatchObject({ errortype: 'ActionError', data: { reason: 'provider_unavailable', payment_source: 'card_processor' } });
    expect(f.stripe.callsTo('DELETE', '/v1/subscriptions/')).toHaveLength(0);
    expect(f.stripe.subscriptions.get(s.ref)!.status).toBe('active');
    const item = await orderItem(f.t, s.id);
    expect(item.odi_subscription_status).toBe('active');
    expect(item.odi_refund_amount).toBeNull();
    expect(await f.tierOf(s.userId)).toBe('silver');
  });

  it('a cancel that fails after the refund keeps the refund on record and says exactly that; a retry cancels without refunding again', async () => {
    const s = await f.subscriber('card_processor', f.plans.silver);
    f.stripe.refuseCancels = { status: 500, code: 'api_error', message: 'Something went wrong.' };
    const res = await cancel(s.headers, s.id);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json.data).toEqual({ order_item_id: s.id, status: 'active', timing: 'immediate', end_date: null, refund_amount: 2950, currency: 'usd', cancelled: false });
    expect(res.json.success_message).toBe(
      'We refunded 29.50 USD of the unused period, but your subscription could not be cancelled at the payment provider: it is still active and will renew. Please try cancelling again later.',
    );
    expect(refunds()).toEqual([[s.payment, '2950']]);
    const item = await orderItem(f.t, s.id);
    expect(item.odi_subscription_status).toBe('active');
    expect(Number(item.odi_refund_amount)).toBe(2950);
    expect(f.stripe.subscriptions.get(s.ref)!.status).toBe('active');
    expect(await f.tierOf(s.userId)).toBe('silver');

    f.stripe.refuseCancels = null;
    const retry = await cancel(s.headers, s.id);
    expect(retry.statusCode, retry.body).toBe(200);
    expect(retry.json.data).toMatchObject({ status: 'expired', refund_amount: 0, cancelled: true });
    expect(refunds()).toHaveLength(1);
    expect(f.stripe.subscriptions.get(s.ref)!.status).toBe('canceled');
    expect(Number((await orderItem(f.t, s.id)).odi_refund_amount)).toBe(2950);
    expect(await f.tierOf(s.userId)).toBeNull();
  });
});
