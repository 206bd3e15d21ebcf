import { createTestApp, type TestApp } from './app.js';
import { CARD_WEBHOOK_SECRET } from './providers/card-driver.js';
import { FakePaypal } from './providers/fake-paypal.js';
import { FakeStripe } from './providers/fake-stripe.js';
import { insertSubscription, subscriptionProduct } from './subscriptions.js';
import { createTier, type TestTier } from './tiers.js';

export type Source = 'card_processor' | 'wallet_provider' | 'ios_store' | 'android_store';

/** The default subscription settings (DESIGN 7), restored before each lifecycle test. */
export const LIFECYCLE_DEFAULTS = {
  products_active: true,
  subscriptions_active: true,
  subscription_downgrades_enabled: true,
  subscription_downgrade_timing: 'end_of_period',
  subscription_cancellation_enabled: true,
  subscription_cancellation_timing: 'end_of_period',
  subscription_reactivation_enabled: true,
  subscription_cancellation_prorate: false,
} as const;

/** Paid period of every fixture subscription: 30 days; the test clock starts 12 hours in. */
export const PERIOD_START = new Date('2026-03-01T00:00:00Z');
export const PERIOD_END = new Date('2026-03-31T00:00:00Z');
export const CLOCK_START = '2026-03-01T12:00:00Z';

export interface Plan {
  productId: number;
  tier: TestTier;
  price: number;
  cardPrice: string;
  walletPlan: string;
}

/**
 * An app whose card processor and wallet provider are fake servers on 127.0.0.1, with three tiers
 * (bronze 10, silver 20, gold 30) each sold as a monthly plan at every source.
 */
export class LifecycleFixture {
  t!: TestApp;
  stripe!: FakeStripe;
  paypal!: FakePaypal;
  plans!: { bronze: Plan; silver: Plan; gold: Plan };
  private n = 0;

  async start(): Promise<this> {
    this.stripe = await new FakeStripe().start();
    this.paypal = await new FakePaypal().start();
    this.t = await createTestApp({
      start: CLOCK_START,
      settings: {
        ...LIFECYCLE_DEFAULTS,
        card_processor_api_key: 'sk_test_lifecycle',
        card_processor_api_base: this.stripe.base,
        // With both, the card processor counts as configured: the store is open only with a configured source.
        card_processor_webhook_secret: CARD_WEBHOOK_SECRET,
        wallet_provider_api_base: this.paypal.base,
        wallet_provider_client_id: this.paypal.clientId,
        wallet_provider_client_secret: this.paypal.clientSecret,
      },
    });
    // The processor's clock is the app's: its proration and periods agree with ours.
    this.stripe.now = () => Math.floor(this.t.clock.nowMs() / 1000);
    const plan = async (name: string, level: number, price: number): Promise<Plan> => {
      const tier = await createTier(this.t, { name, displayName: name[0]!.toUpperCase() + name.slice(1), level });
      const cardPrice = `price_${name}`;
      this.stripe.prices.set(cardPrice, price);
      const walletPlan = `P-${name.toUpperCase()}`;
      const productId = await subscriptionProduct(this.t, {
        name: `${tier.name} monthly`,
        tierId: tier.tierId,
        extra: { pro_price: price, pro_card_price_id: cardPrice, pro_wallet_plan_id: walletPlan, pro_ios_product_id: `ios.${name}`, pro_android_product_id: `android.${name}` },
      });
      return { productId, tier, price, cardPrice, walletPlan };
    };
    this.plans = { bronze: await plan('bronze', 10, 1000), silver: await plan('silver', 20, 3000), gold: await plan('gold', 30, 6000) };
    return this;
  }

  async reset(): Promise<void> {
    this.t.clock.set(CLOCK_START);
    for (const [k, v] of Object.entries(LIFECYCLE_DEFAULTS)) await this.t.services.settings.set(k, v);
    this.stripe.calls.length = 0;
    this.paypal.calls.length = 0;
    this.stripe.refuseRefunds = null;
    this.stripe.refuseCancels = null;
  }

  async stop(): Promise<void> {
    await this.t.close();
    await this.stripe.stop();
    await this.paypal.stop();
  }

  /**
   * A member holding `plan` through `source`: the order item as the store records it (provider
   * reference, payment reference), the provider's own subscription, and the tier granted by the grant path.
   */
  async subscriber(source: Source, plan: Plan, o: { status?: 'active' | 'cancelled' | 'expired' | 'refunded'; paymentOnRecord?: boolean } = {}) {
    const { headers, userId } = await this.t.keyHeaders();
    const ref = `${source === 'card_processor' ? 'sub' : source === 'wallet_provider' ? 'I-SUB' : 'store'}_${++this.n}_${userId}`;
    const id = await insertSubscription(this.t, userId, plan.productId, {
      source,
      price: plan.price,
      periodStart: PERIOD_START,
      periodEnd: PERIOD_END,
      ...(o.status ? { status: o.status } : {}),
      extra: { odi_subscription_reference: ref },
    });
    const payment = `${source === 'wallet_provider' ? 'CAPTURE' : 'pi'}_${this.n}`;
    const db = this.t.services.db as any;
    const item = await db.selectFrom('odi_order_items').select('odi_ord_order_id').where('odi_order_item_id', '=', id).executeTakeFirstOrThrow();
    // paymentOnRecord false: as a subscription checkout or webhook leaves it, the order names no payment.
    if (o.paymentOnRecord !== false) {
      await db
        .updateTable('ord_orders')
        .set(source === 'wallet_provider' ? { ord_paypal_order_id: payment } : { ord_stripe_payment_intent_id: payment })
        .where('ord_order_id', '=', item.odi_ord_order_id)
        .execute();
    }
    if (source === 'card_processor') {
      this.stripe.addSubscription(ref, plan.cardPrice, PERIOD_END.getTime() / 1000, { user_id: String(userId), product_id: String(plan.productId) }, PERIOD_START.getTime() / 1000);
      // The processor knows what the period's payment was, and refuses to refund more than that.
      if (o.paymentOnRecord !== false) this.stripe.payments.set(payment, { amount: plan.price, refunded: 0 });
    }
    if (source === 'wallet_provider') this.paypal.addSubscription({ id: ref, plan_id: plan.walletPlan, billing_info: { next_billing_time: PERIOD_END.toISOString() } });
    if (!o.status || o.status === 'active' || o.status === 'cancelled') {
      await this.t.services.tiers.membership.grantTierFromPurchase(userId, plan.productId, source, { type: 'order_item', id });
    }
    return { headers, userId, id, ref, payment };
  }

  action(name: string, headers: Record<string, string>, payload: Record<string, unknown>) {
    return this.t.request({ method: 'POST', url: `/api/v1/action/${name}`, headers, payload });
  }

  async tierOf(userId: number): Promise<string | null> {
    const row = await this.t.services.db
      .selectFrom('grm_group_members')
      .innerJoin('sbt_subscription_tiers', 'sbt_subscription_tier_id', 'grm_sbt_subscription_tier_id')
      .select(['sbt_name'])
      .where('grm_foreign_key_id', '=', userId)
      .execute();
    if (row.length > 1) throw new Error(`user ${userId} is in ${row.length} tiers`);
    return row[0]?.sbt_name ?? null;
  }
}
