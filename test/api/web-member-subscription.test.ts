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
  describe('billing issues (DESIGN 14): what is wrong and what to do', () => {
    const GRACE_END = new Date('2026-04-07T00:00:00Z');
    /** A member whose subscription at `source` is in a billing state, as the webhooks leave it. */
    async function inState(source: Source, status: 'in_grace' | 'on_hold' | 'paused', extra: Record<string, unknown> = {}) {
      const m = await member(source, f.plans.silver);
      await (f.t.services.db as any)
        .updateTable('odi_order_items')
        .set({ odi_subscription_status: status, odi_subscription_grace_until: status === 'in_grace' ? GRACE_END : null, ...extra })
        .where('odi_order_item_id', '=', m.itemId)
        .execute();
      if (status !== 'in_grace') await f.t.services.tiers.membership.removeFromAllTiers(m.userId, status, { type: 'order_item', id: m.itemId });
      return m;
    }

    it('card in grace: says the payment failed and until when access is kept, and links to the billing portal, which opens for the subscription’s customer', async () => {
      const m = await inState('card_processor', 'in_grace');
      const html = await page(m.web);
      expect(html).toMatch(new RegExp(`data-order-item="${m.itemId}" data-status="in_grace"`));
      expect(html).toContain('<td class="status">Payment failed, retrying</td>');
      expect(html).toContain('<th>Access kept until</th><td class="grace-until">2026-04-07 00:00:00</td>');
      expect(html).toContain('<th>Payment due since</th>');
      expect(html).not.toContain('<th>Renews on</th>');
      expect(html).toContain('<strong>Your last payment did not go through.</strong> We will keep trying to charge it, and you keep your access until 2026-04-07 00:00:00. To keep your subscription, update your payment method in the card processor’s billing portal.');
      expect(html).toContain(`<a class="fix-payment" href="/profile/subscription/payment-method/${m.itemId}" rel="noopener">Update your card</a>`);

      const portal = await m.web.get(`/profile/subscription/payment-method/${m.itemId}`);
      expect(portal.statusCode).toBe(303);
      const session = f.stripe.portalSessions.at(-1)!;
      expect(portal.headers.location).toBe(session.url);
      expect(session).toMatchObject({ customer: `cus_ref_card_processor_${m.userId}`, return_url: expect.stringMatching(/\/profile\/subscription$/) });
    });

    it('the portal link opens only the member’s own card subscription, and says so when the processor cannot open it', async () => {
      const m = await inState('card_processor', 'in_grace');
      const other = await member('card_processor', f.plans.gold);
      expect((await m.web.get(`/profile/subscription/payment-method/${other.itemId}`)).statusCode).toBe(404);
      expect((await m.web.get('/profile/subscription/payment-method/x')).statusCode).toBe(404);
      f.stripe.subscriptions.delete(`ref_card_processor_${m.userId}`);
      const down = await m.web.get(`/profile/subscription/payment-method/${m.itemId}`);
      expect(down.statusCode).toBe(502);
      expect(down.body).toContain('id="portal-unavailable">The card processor’s billing portal cannot be opened right now.');
    });

    it('wallet on hold: says access is on hold until the payment succeeds, and links to PayPal’s automatic payments', async () => {
      const m = await inState('wallet_provider', 'on_hold');
      const html = await page(m.web);
      expect(html).toContain('<td class="status">On hold: payment failed</td>');
      expect(html).toContain('<strong>Your access is on hold because your payment did not go through.</strong> Update your payment method in your PayPal account (Automatic payments); your access comes back as soon as the payment succeeds.');
      expect(html).toContain('<a class="fix-payment" href="https://www.paypal.com/myaccount/autopay/" rel="noopener">Update your payment method in PayPal</a>');
      expect(html).toContain('id="no-tier"');
      expect(actionsIn(html).filter((a) => a.startsWith('orders_recurring_action'))).toEqual([]);
    });

    it('the stores: their own subscription pages; a paused subscription says until when', async () => {
      const ios = await inState('ios_store', 'in_grace');
      const html = await page(ios.web);
      expect(html).toContain('update your payment method in your App Store account.');
      expect(html).toContain('<a class="fix-payment" href="https://apps.apple.com/account/subscriptions" rel="noopener">Update your payment method in the App Store</a>');
      const android = await inState('android_store', 'on_hold');
      expect(await page(android.web)).toContain('<a class="fix-payment" href="https://play.google.com/store/account/subscriptions" rel="noopener">Update your payment method in Google Play</a>');
      const paused = await inState('android_store', 'paused', { odi_subscription_resume_time: new Date('2026-05-01T00:00:00Z') });
      const pausedHtml = await page(paused.web);
      expect(pausedHtml).toContain('<td class="status">Paused</td>');
      expect(pausedHtml).toContain('<strong>Your subscription is paused until 2026-05-01 00:00:00.</strong> Your access returns when it resumes.');
      expect(pausedHtml).not.toContain('class="fix-payment"');
    });

    it('the admin member page shows each subscription’s status, grace end and billing issue; staff only', async () => {
      const m = await inState('card_processor', 'in_grace');
      const s = await f.t.createUser({ permission: 5 });
      const staff = await signIn(f.t, s.email, s.password);
      const res = await staff.get(`/admin/members/${m.userId}`);
      expect(res.statusCode).toBe(200);
      expect(res.body).toContain('id="billing-issue" role="alert"><strong>Billing issue:</strong> a renewal payment failed; the provider is retrying.');
      expect(res.body).toContain(`<tr data-order-item="${m.itemId}" data-status="in_grace">`);
      expect(res.body).toContain('<td class="status" data-label="Status">in_grace</td>');
      expect(res.body).toContain('<td class="grace-until" data-label="Grace until">2026-04-07 00:00:00</td>');
      expect(res.body).toContain('<td class="billing-issue" data-label="Billing issue">Yes</td>');
      expect(res.body).toContain('<td class="source" data-label="Billed through">Card</td>');
      expect((await staff.get('/admin/members/999999')).statusCode).toBe(404);
      const healthy = await member('wallet_provider', f.plans.gold);
      const ok = await staff.get(`/admin/members/${healthy.userId}`);
      expect(ok.body).not.toContain('id="billing-issue"');
      expect(ok.body).toContain('<td class="billing-issue" data-label="Billing issue">No</td>');
      expect((await m.web.get(`/admin/members/${m.userId}`)).statusCode).toBe(403);
    });
  });
});
