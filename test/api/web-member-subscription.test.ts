import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { signIn, webClient, type WebClient } from '../helpers/browser-session.js';
import { LifecycleFixture, PERIOD_END, PERIOD_START, type Plan, type Source } from '../helpers/lifecycle.js';
import { insertSubscription } from '../helpers/subscriptions.js';

/** The member's subscription page, driven like a browser without JavaScript (cookies over inject). */
describe('member subscription management view', () => {
  const f = new LifecycleFixture();
  beforeAll(async () => void (await f.start()));
  afterAll(async () => f.stop());
  beforeEach(async () => f.reset());

  /** A signed-in member holding `plan` through `source` (tier granted through the grant path). */
  async function member(source: Source | null, plan: Plan | null, status: 'active' | 'cancelled' = 'active'): Promise<{ web: WebClient; userId: number; itemId: number | null }> {
    const u = await f.t.createUser();
    let itemId: number | null = null;
    if (source && plan) {
      itemId = await insertSubscription(f.t, u.userId, plan.productId, {
        source,
        price: plan.price,
        periodStart: PERIOD_START,
        periodEnd: PERIOD_END,
        status,
        extra: { odi_subscription_reference: `ref_${source}_${u.userId}` },
      });
      const ref = `ref_${source}_${u.userId}`;
      if (source === 'card_processor') f.stripe.addSubscription(ref, plan.cardPrice, PERIOD_END.getTime() / 1000, { user_id: String(u.userId), product_id: String(plan.productId) });
      if (source === 'wallet_provider') f.paypal.addSubscription({ id: ref, plan_id: plan.walletPlan, billing_info: { next_billing_time: PERIOD_END.toISOString() } });
      await f.t.services.tiers.membership.grantTierFromPurchase(u.userId, plan.productId, source, { type: 'order_item', id: itemId });
    }
    return { web: await signIn(f.t, u.email, u.password), userId: u.userId, itemId };
  }

  const page = async (web: WebClient, query = '') => {
    const res = await web.get(`/profile/subscription${query}`);
    expect(res.statusCode).toBe(200);
    return res.body;
  };
  const actionsIn = (html: string) => [...html.matchAll(/<button[^>]*data-action="([^"]+)"[^>]*>([^<]+)<\/button>/g)].map((m) => `${m[1]}:${m[2]}`);

  it('sends a visitor who is not signed in to sign-in', async () => {
    const res = await webClient(f.t).get('/profile/subscription');
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe('/login?next=%2Fprofile%2Fsubscription');
  });

  it('card subscriber: tier and features, billing, renewal date, cancel, upgrade and downgrade controls', async () => {
    const m = await member('card_processor', f.plans.silver);
    const html = await page(m.web);
    expect(html).toContain('<meta name="service-api-csrf"');
    expect(html).toMatch(/id="tier-name"><strong>Silver<\/strong> <span class="help">\(level 20\)<\/span>/);
    expect(html).toMatch(/<table id="tier-features">/);
    expect(html).toMatch(new RegExp(`data-order-item="${m.itemId}" data-status="active"`));
    expect(html).toContain('<td class="source">Card</td>');
    expect(html).toContain('<td class="price">$30.00 per month</td>');
    expect(html).toContain('<th>Renews on</th><td class="date">2026-03-31 00:00:00</td>');
    expect(actionsIn(html)).toEqual([
      'orders_recurring_action:Cancel subscription',
      'change_tier:Downgrade to Bronze',
      'change_tier:Upgrade to Gold',
    ]);
    // Each control carries the exact body its action takes, and asks for confirmation.
    expect(html).toContain(`data-body="{&quot;order_item_id&quot;:${m.itemId},&quot;recurring_action&quot;:&quot;cancel&quot;}"`);
    expect(html).toContain(`data-body="{&quot;product_id&quot;:${f.plans.gold.productId}}"`);
    expect(html).toMatch(/data-confirm="Cancel silver monthly\? Your access ends at the end of the paid period\."/);
    expect(html).toContain('<script src="/static/subscription.js" defer></script>');
  });

  it('a cancelled subscription shows its end date and a reactivate control, and no cancel', async () => {
    const m = await member('card_processor', f.plans.silver, 'cancelled');
    const html = await page(m.web);
    expect(html).toContain('<td class="status">Cancelled</td>');
    expect(html).toContain('<th>Ends on</th><td class="date">2026-03-31 00:00:00</td>');
    expect(actionsIn(html).filter((a) => a.startsWith('orders_recurring_action'))).toEqual(['orders_recurring_action:Reactivate subscription']);
  });

  it('the settings decide which controls appear', async () => {
    const m = await member('wallet_provider', f.plans.silver);
    await f.t.services.settings.set('subscription_cancellation_enabled', false);
    await f.t.services.settings.set('subscription_downgrades_enabled', false);
    expect(actionsIn(await page(m.web))).toEqual(['change_tier:Upgrade to Gold']);

    await f.t.services.settings.set('subscription_cancellation_enabled', true);
    await f.t.services.settings.set('subscription_cancellation_timing', 'immediate');
    await f.t.services.settings.set('subscription_cancellation_prorate', true);
    await f.t.services.settings.set('subscription_downgrades_enabled', true);
    await f.t.services.settings.set('subscription_downgrade_timing', 'immediate');
    const html = await page(m.web);
    expect(html).toContain('<td class="source">Wallet (online payment account)</td>');
    expect(html).toMatch(/data-confirm="Cancel silver monthly\? Your access ends now\. The unused part of the period will be refunded\."/);
    expect(html).toMatch(/data-confirm="Downgrade to Bronze \(bronze monthly\)\? The change takes effect now\."/);

    const c = await member('card_processor', f.plans.gold, 'cancelled');
    await f.t.services.settings.set('subscription_reactivation_enabled', false);
    expect(actionsIn(await page(c.web)).filter((a) => a.startsWith('orders_recurring_action'))).toEqual([]);
  });

  it('store-billed subscribers get a link to their store and no controls', async () => {
    const ios = await member('ios_store', f.plans.silver);
    const html = await page(ios.web);
    expect(html).toContain('<td class="source">App Store</td>');
    expect(html).toContain('<a class="store-link" href="https://apps.apple.com/account/subscriptions" rel="noopener">Manage in the App Store</a>');
    expect(actionsIn(html)).toEqual([]);
    expect(html).not.toContain('id="change-tier"');

    const android = await member('android_store', f.plans.bronze);
    const html2 = await page(android.web);
    expect(html2).toContain('Manage in Google Play');
    expect(actionsIn(html2)).toEqual([]);
  });

  it('a member without a subscription is offered the tiers, each added to the cart for checkout', async () => {
    const m = await member(null, null);
    const html = await page(m.web);
    expect(html).toContain('id="no-tier">You are not a member of any tier.');
    expect(html).toContain('id="no-subscription">You have no subscription.');
    expect(actionsIn(html)).toEqual(['cart:Choose Bronze', 'cart:Choose Silver', 'cart:Choose Gold']);
    expect(html).toContain(`data-body="{&quot;product_id&quot;:${f.plans.bronze.productId}}" data-next="/cart"`);
  });

  it('with the store inactive the tier is shown but nothing can be changed', async () => {
    const m = await member('card_processor', f.plans.silver);
    await f.t.services.settings.set('subscriptions_active', false);
    const html = await page(m.web);
    expect(html).toContain('Silver');
    expect(html).toContain('id="store-inactive"');
    expect(actionsIn(html)).toEqual([]);
  });

  it('reports the result of a control after it reloads, from a fixed set of messages only', async () => {
    const m = await member('card_processor', f.plans.silver);
    expect(await page(m.web, '?done=cancelled')).toContain('<p class="notice" id="done" role="status">Your subscription has been cancelled.</p>');
    expect(await page(m.web, '?done=not_cancelled')).toContain(
      '<p class="notice" id="done" role="status">The unused part of the period was refunded, but the payment provider could not cancel your subscription: it is still active and will renew. Please try cancelling again later.</p>',
    );
    expect(await page(m.web, '?done=%3Cscript%3E')).not.toContain('id="done"');
  });

  it('a downgrade scheduled from the page is shown with its date and can be undone with a keep control', async () => {
    const m = await member('card_processor', f.plans.silver);
    const down = await m.web.api('POST', '/api/v1/action/change_tier', { payload: { product_id: f.plans.bronze.productId } });
    expect(down.statusCode).toBe(200);
    const html = await page(m.web);
    expect(html).toContain('<p class="notice scheduled">Changes to bronze on 2026-03-31 00:00:00.</p>');
    const keep = actionsIn(html).filter((a) => a.includes('Keep'));
    expect(keep).toEqual(['change_tier:Keep my current tier']);
    expect(html).toContain(`data-body="{&quot;tier_id&quot;:${f.plans.silver.tier.tierId}}"`);
    const undo = await m.web.api('POST', '/api/v1/action/change_tier', { payload: { tier_id: f.plans.silver.tier.tierId } });
    expect(undo.statusCode).toBe(200);
    expect(await page(m.web)).not.toContain('class="notice scheduled"');
  });

  it('an upgrade from the page moves the member to the higher tier', async () => {
    const m = await member('card_processor', f.plans.silver);
    const up = await m.web.api('POST', '/api/v1/action/change_tier', { payload: { product_id: f.plans.gold.productId } });
    expect(up.statusCode).toBe(200);
    expect(await f.tierOf(m.userId)).toBe('gold');
    const html = await page(m.web);
    expect(html).toMatch(/id="tier-name"><strong>Gold<\/strong>/);
    expect(actionsIn(html).filter((a) => a.startsWith('change_tier'))).toEqual(['change_tier:Downgrade to Bronze', 'change_tier:Downgrade to Silver']);
  });

  it('the controls’ actions work for the page’s browser session (cancel, then reactivate)', async () => {
    const m = await member('card_processor', f.plans.silver);
    const cancel = await m.web.api('POST', '/api/v1/action/orders_recurring_action', { payload: { order_item_id: m.itemId, recurring_action: 'cancel' } });
    expect(cancel.statusCode).toBe(200);
    expect(await page(m.web)).toContain('<td class="status">Cancelled</td>');
    const again = await m.web.api('POST', '/api/v1/action/orders_recurring_action', { payload: { order_item_id: m.itemId, recurring_action: 'reactivate' } });
    expect(again.statusCode).toBe(200);
    expect(await page(m.web)).toContain('<td class="status">Active</td>');
  });
});
