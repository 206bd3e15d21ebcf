import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createCheckout } from '../../src/store/checkout.js';
import { SCREENSHOT_DIR, describeBrowser, useBrowserServer } from '../helpers/browser.js';
import { startCardCheckout } from '../helpers/card-checkout.js';
import { FakeStripe } from '../helpers/providers/fake-stripe.js';
import { createProduct } from '../helpers/store.js';
import { createTier, tierMemberships } from '../helpers/tiers.js';

describeBrowser('browser: card processor hosted checkout (fake provider)', () => {
  const fx = useBrowserServer();
  let stripe: FakeStripe;
  beforeAll(async () => void (stripe = await startCardCheckout(fx.t, fx.t.baseUrl, 'sk_test_browser')));
  afterAll(async () => stripe?.stop());

  it('the session url shows a Pay button; paying delivers the signed webhook, grants the tier and redirects to success_url', async () => {
    const tier = await createTier(fx.t, { name: 'gold', level: 30 });
    const productId = await createProduct(fx.t, { tierId: tier.tierId, refs: { pro_card_price_id: 'price_gold' } });
    const { userId } = await fx.t.createUser();
    const successUrl = `${fx.t.baseUrl}/?checkout=done`;
    const { orderId, url } = await createCheckout(fx.t.services.db, fx.t.services, userId, [{ product_id: productId, quantity: 1 }], { successUrl, cancelUrl: `${fx.t.baseUrl}/cart` });
    const page = await (await fx.browser.newContext()).newPage();
    await page.goto(url);
    await page.screenshot({ path: path.join(SCREENSHOT_DIR, 'fake-card-processor-pay.png') });
    await Promise.all([page.waitForURL((u) => u.href.startsWith(fx.t.baseUrl)), page.click('button:text-is("Pay")')]);
    expect(stripe.deliveries.map((d) => d.status)).toEqual([200]);
    expect(stripe.calls.find((c) => c.method === 'POST' && c.path.startsWith('/pay/'))).toBeDefined();
    const order = await fx.t.services.db.selectFrom('ord_orders').select('ord_status').where('ord_order_id', '=', orderId).executeTakeFirstOrThrow();
    expect(order.ord_status).toBe(2);
    expect((await tierMemberships(fx.t, userId)).map((m) => m.grm_sbt_subscription_tier_id)).toEqual([tier.tierId]);
  });
});
