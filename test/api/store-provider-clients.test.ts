import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestClock } from '../../src/lib/clock.js';
import { StripeCardProcessorClient } from '../../src/store/providers/card-processor.js';
import { RestWalletProviderClient, WalletProviderError } from '../../src/store/providers/wallet-provider.js';
import { FakePaypal } from '../helpers/providers/fake-paypal.js';
import { FakeStripe } from '../helpers/providers/fake-stripe.js';

let stripe: FakeStripe;
let paypal: FakePaypal;
beforeAll(async () => {
  stripe = await new FakeStripe().start();
  paypal = await new FakePaypal().start();
});
afterAll(async () => {
  await stripe.stop();
  await paypal.stop();
});

describe('card processor client (stripe SDK against card_processor_api_base)', () => {
  const client = () => new StripeCardProcessorClient('sk_test_client', stripe.base);

  it('cancel at period end, resume, and cancel now reach the provider with the SDK', async () => {
    stripe.addSubscription('sub_c1', 'price_a', 1_900_000_000);
    const scheduled = await client().cancel('sub_c1', { atPeriodEnd: true });
    expect(scheduled).toMatchObject({ id: 'sub_c1', cancelAtPeriodEnd: true, status: 'active', priceId: 'price_a' });
    expect(scheduled.currentPeriodEnd?.toISOString()).toBe(new Date(1_900_000_000_000).toISOString());
    const resumed = await client().resume('sub_c1');
    expect(resumed.cancelAtPeriodEnd).toBe(false);
    const ended = await client().cancel('sub_c1', { atPeriodEnd: false });
    expect(ended.status).toBe('canceled');
    const calls = stripe.calls.filter((c) => c.path === '/v1/subscriptions/sub_c1');
    expect(calls.map((c) => [c.method, c.body?.cancel_at_period_end])).toEqual([
      ['POST', 'true'],
      ['POST', 'false'],
      ['DELETE', undefined],
    ]);
    expect(calls[0]!.headers.authorization).toBe('Bearer sk_test_client');
  });

  it('change plan swaps the subscription item price, with or without prorations', async () => {
    stripe.addSubscription('sub_c2', 'price_a', 1_900_000_000);
    const changed = await client().changePlan('sub_c2', 'price_b', { prorate: true });
    expect(changed.priceId).toBe('price_b');
    const update = stripe.calls.filter((c) => c.method === 'POST' && c.path === '/v1/subscriptions/sub_c2').at(-1)!;
    expect(update.body).toMatchObject({ items: [{ id: 'si_sub_c2', price: 'price_b' }], proration_behavior: 'create_prorations' });
    await client().changePlan('sub_c2', 'price_a', { prorate: false });
    expect(stripe.calls.filter((c) => c.method === 'POST' && c.path === '/v1/subscriptions/sub_c2').at(-1)!.body.proration_behavior).toBe('none');
  });

  it('refund by payment intent with an amount in minor units', async () => {
    const refund = await client().refund({ paymentIntentId: 'pi_9', amount: 1250 });
    expect(refund).toMatchObject({ amount: 1250, status: 'succeeded' });
    expect(stripe.callsTo('POST', '/v1/refunds').at(-1)!.body).toMatchObject({ payment_intent: 'pi_9', amount: '1250' });
  });

  it('an unknown subscription is a provider error', async () => {
    await expect(client().getSubscription('sub_missing')).rejects.toThrow(/No such subscription/);
  });
});

describe('wallet provider client (REST against wallet_provider_api_base)', () => {
  const client = () => new RestWalletProviderClient(paypal.base, paypal.clientId, paypal.clientSecret, new TestClock());

  it('reads, suspends, resumes and cancels a subscription with one cached token', async () => {
    paypal.addSubscription({ id: 'I-W1', plan_id: 'P-1', custom_id: 'tok', billing_info: { next_billing_time: '2026-04-01T00:00:00Z' } });
    const c = client();
    expect(await c.getSubscription('I-W1')).toEqual({ id: 'I-W1', status: 'ACTIVE', planId: 'P-1', customId: 'tok', nextBillingTime: new Date('2026-04-01T00:00:00Z') });
    await c.suspend('I-W1', 'member paused');
    expect(paypal.subscriptions.get('I-W1')!.status).toBe('SUSPENDED');
    await c.resume('I-W1', 'member resumed');
    expect(paypal.subscriptions.get('I-W1')!.status).toBe('ACTIVE');
    await c.cancel('I-W1', 'member cancelled');
    expect(paypal.subscriptions.get('I-W1')!.status).toBe('CANCELLED');
    expect(paypal.callsTo('POST', '/v1/billing/subscriptions/I-W1/cancel')[0]!.body).toEqual({ reason: 'member cancelled' });
    expect(paypal.calls.filter((x) => x.path === '/v1/oauth2/token')).toHaveLength(1);
  });

  it('change plan revises the subscription and returns the approval link', async () => {
    paypal.addSubscription({ id: 'I-W2', plan_id: 'P-1' });
    const res = await client().changePlan('I-W2', 'P-2');
    expect(res.approvalUrl).toBe(`${paypal.base}/approve/I-W2`);
    expect(paypal.subscriptions.get('I-W2')!.plan_id).toBe('P-2');
  });

  it('refund sends the amount as a decimal string with an upper-case currency', async () => {
    const res = await client().refund('CAP-1', { value: 1999, currency: 'usd' });
    expect(res.status).toBe('COMPLETED');
    expect(paypal.callsTo('POST', '/v2/payments/captures/CAP-1/refund')[0]!.body).toEqual({ amount: { value: '19.99', currency_code: 'USD' } });
  });

  it('wrong client credentials and unknown subscriptions are WalletProviderError', async () => {
    const bad = new RestWalletProviderClient(paypal.base, 'x', 'y', new TestClock());
    await expect(bad.getSubscription('I-W1')).rejects.toBeInstanceOf(WalletProviderError);
    await expect(client().getSubscription('I-NONE')).rejects.toMatchObject({ status: 404 });
  });
});
