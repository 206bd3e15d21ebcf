import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBillingSource } from '../helpers/store.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { signIn, webClient } from '../helpers/browser-session.js';
import { createTier, type TestTier } from '../helpers/tiers.js';

const SECRET = 'The vault code is 7731 and the meeting is at the old mill on Thursday.';
const BODY = `<p>Members only. ${SECRET}</p>`;

describe('tier-gated content', () => {
  let t: TestApp;
  let basic: TestTier;
  let premium: TestTier;
  let author: number;
  let ids: { open: number; gated: number; early: number; earlyOver: number; unpublished: number };
  const sessionOf: Record<string, Record<string, string>> = {};
  const users: Record<string, { email: string; password: string; userId: number }> = {};

  /** An active product granting `tierId`, as the store's upgrade options list it. */
  async function tierProduct(name: string, link: string, tierId: number): Promise<{ pro_product_id: number }> {
    const now = t.clock.now();
    return (t.services.db as any)
      .insertInto('pro_products')
      .values({ pro_name: name, pro_link: link, pro_is_active: true, pro_sbt_subscription_tier_id: tierId, pro_create_time: now, pro_update_time: now })
      .returning('pro_product_id')
      .executeTakeFirstOrThrow();
  }

  async function post(values: Record<string, unknown>): Promise<number> {
    const now = t.clock.now();
    const row = await (t.services.db as any)
      .insertInto('pst_posts')
      .values({ pst_usr_user_id: author, pst_is_published: true, pst_published_time: now, pst_create_time: now, pst_update_time: now, ...values })
      .returning('pst_post_id')
      .executeTakeFirstOrThrow();
    return Number(row.pst_post_id);
  }

  beforeAll(async () => {
    t = await createTestApp();
    // The store opens only with a configured billing source.
    await ensureBillingSource(t);
    basic = await createTier(t, { name: 'basic', displayName: 'Basic', level: 10 });
    premium = await createTier(t, { name: 'premium', displayName: 'Premium', level: 20 });
    for (const [kind, permission] of [['tierless', 0], ['basic', 0], ['premium', 0], ['staff', 5]] as const) {
      const u = await t.createUser({ permission });
      users[kind] = u;
      sessionOf[kind] = (await t.login(u.email, u.password)).headers;
    }
    await t.services.tiers.membership.assignManually(users.basic!.userId, basic.tierId, null);
    await t.services.tiers.membership.assignManually(users.premium!.userId, premium.tierId, null);
    author = users.staff!.userId;
    ids = {
      open: await post({ pst_title: 'Open <news> & notes', pst_body: '<p>Everyone may read this.</p>' }),
      gated: await post({ pst_title: 'Premium report', pst_body: BODY, pst_tier_min_level: 20 }),
      early: await post({ pst_title: 'Early access', pst_body: BODY, pst_tier_min_level: 20, pst_tier_public_after_hours: 48 }),
      earlyOver: await post({ pst_title: 'Was early', pst_body: '<p>Now public.</p>', pst_tier_min_level: 20, pst_tier_public_after_hours: 1, pst_published_time: new Date(t.clock.nowMs() - 2 * 3600_000) }),
      unpublished: await post({ pst_title: 'Draft', pst_body: '<p>draft</p>', pst_is_published: false }),
    };
  });
  afterAll(async () => t.close());

  const read = (kind: string, id: number) => t.request({ method: 'GET', url: `/api/v1/Post/${id}`, headers: sessionOf[kind] });

  describe('API reads', () => {
    it('a tierless reader gets tier_access denied with every contract key, and no body at preview length 0', async () => {
      const res = await read('tierless', ids.gated);
      expect(res.statusCode).toBe(200);
      expect(res.json.data.pst_body).toBeNull();
      expect(res.json.data.tier_access).toEqual({
        allowed: false,
        reason: 'tier_too_low',
        required_level: 20,
        user_level: null,
        required_tier: { tier_id: premium.tierId, name: 'premium', display_name: 'Premium', tier_level: 20 },
        upgrade_options: [], // the store is inactive: nothing is on sale
        prompt: { kind: 'contact', message: expect.any(String) },
      });
      expect(res.body).not.toContain('vault code');
    });

    it('a lower tier is told its level; at preview length 10 it gets the first 10 plain-text characters only', async () => {
      await t.services.settings.set('tier_gate_preview_length', 10);
      try {
        const res = await read('basic', ids.gated);
        expect(res.json.data.pst_body).toBe('Members on');
        expect(res.json.data.tier_access).toMatchObject({ allowed: false, reason: 'tier_too_low', user_level: 10 });
        expect(res.body).not.toContain('vault code');
      } finally {
        await t.services.settings.set('tier_gate_preview_length', 0);
      }
    });

    it('a member of the required tier and staff read the body', async () => {
      for (const kind of ['premium', 'staff']) {
        const res = await read(kind, ids.gated);
        expect(res.json.data.pst_body, kind).toBe(BODY);
        expect(res.json.data.tier_access).toMatchObject({ allowed: true, reason: null, required_level: 20 });
      }
    });

    it('an ungated post reports allowed with no requirement; early access opens once its hours have passed', async () => {
      expect((await read('tierless', ids.open)).json.data.tier_access).toEqual({
        allowed: true, reason: null, required_level: null, user_level: null, required_tier: null, upgrade_options: [], prompt: null,
      });
      expect((await read('tierless', ids.early)).json.data.tier_access.allowed).toBe(false);
      expect((await read('tierless', ids.earlyOver)).json.data.pst_body).toBe('<p>Now public.</p>');
    });

    it('the prompt sends users to tier_upgrade_url when set, else to tier products when the store is active', async () => {
      await t.services.settings.set('tier_upgrade_url', 'https://members.example.com/upgrade');
      expect((await read('tierless', ids.gated)).json.data.tier_access.prompt).toEqual({ kind: 'url', url: 'https://members.example.com/upgrade' });
      await t.services.settings.set('tier_upgrade_url', '');
      await t.services.settings.set('products_active', true);
      await t.services.settings.set('subscriptions_active', true);
      const product = await tierProduct('Premium monthly', 'premium-monthly', premium.tierId);
      try {
        const access = (await read('tierless', ids.gated)).json.data.tier_access;
        const p = { product_id: Number(product.pro_product_id), name: 'Premium monthly', link: 'premium-monthly' };
        expect(access.prompt).toEqual({ kind: 'products', products: [{ ...p, tier_id: premium.tierId }] });
        expect(access.upgrade_options).toEqual([{ ...p, tier: { tier_id: premium.tierId, name: 'premium', display_name: 'Premium', tier_level: 20 } }]);
      } finally {
        await t.services.settings.set('products_active', false);
        await t.services.settings.set('subscriptions_active', false);
        await (t.services.db as any).deleteFrom('pro_products').where('pro_product_id', '=', product.pro_product_id).execute();
      }
    });

    it('upgrade_options lists only products on sale: not an inactive or deleted one, and none once the store closes', async () => {
      await t.services.settings.set('products_active', true);
      await t.services.settings.set('subscriptions_active', true);
      const onSale = await tierProduct('Premium quarterly', 'premium-quarterly', premium.tierId);
      const inactive = await tierProduct('Premium retired', 'premium-retired', premium.tierId);
      const deleted = await tierProduct('Premium deleted', 'premium-deleted', premium.tierId);
      await (t.services.db as any).updateTable('pro_products').set({ pro_is_active: false }).where('pro_product_id', '=', inactive.pro_product_id).execute();
      await (t.services.db as any).updateTable('pro_products').set({ pro_delete_time: t.clock.now() }).where('pro_product_id', '=', deleted.pro_product_id).execute();
      const premiumTier = { tier_id: premium.tierId, name: 'premium', display_name: 'Premium', tier_level: 20 };
      try {
        const access = (await read('tierless', ids.gated)).json.data.tier_access;
        expect(access.upgrade_options).toEqual([{ product_id: Number(onSale.pro_product_id), name: 'Premium quarterly', link: 'premium-quarterly', tier: premiumTier }]);
        await t.services.settings.set('subscriptions_active', false);
        expect((await read('tierless', ids.gated)).json.data.tier_access.upgrade_options).toEqual([]);
      } finally {
        await t.services.settings.set('products_active', false);
        await t.services.settings.set('subscriptions_active', false);
        await (t.services.db as any).deleteFrom('pro_products').where('pro_product_id', 'in', [onSale.pro_product_id, inactive.pro_product_id, deleted.pro_product_id]).execute();
      }
    });
  });

  describe('listings', () => {
    const list = (kind: string) => t.request({ method: 'GET', url: '/api/v1/Posts?numperpage=50', headers: sessionOf[kind] });

    it('list gated rows with the preview in place of the body while tier_gate_hide_from_listings is false', async () => {
      const res = await list('tierless');
      // Every published post; the draft is not listed to non-staff at all.
      expect(res.json.num_results).toBe(4);
      const gated = res.json.data.find((p: { pst_post_id: number }) => p.pst_post_id === ids.gated);
      expect(gated.pst_body).toBeNull();
      expect(res.body).not.toContain('vault code');
    });

    it('omit rows the viewer cannot open when it is true, counting only what is shown; staff see everything', async () => {
      await t.services.settings.set('tier_gate_hide_from_listings', true);
      try {
        const tierless = await list('tierless');
        expect(tierless.json.data.map((p: { pst_post_id: number }) => p.pst_post_id).sort()).toEqual([ids.open, ids.earlyOver].sort());
        expect(tierless.json.num_results).toBe(2);
        expect((await list('premium')).json.num_results).toBe(4);
        expect((await list('staff')).json.num_results).toBe(5);
      } finally {
        await t.services.settings.set('tier_gate_hide_from_listings', false);
      }
    });
  });

  describe('RSS', () => {
    it('is RSS 2.0 of published posts, escaped, and always omits gated posts, whoever asks', async () => {
      const anonymous = await t.request({ method: 'GET', url: '/rss' });
      expect(anonymous.statusCode).toBe(200);
      expect(anonymous.headers['content-type']).toContain('application/rss+xml');
      const member = await signIn(t, users.premium!.email, users.premium!.password);
      const asMember = await member.get('/rss');
      const staff = await signIn(t, users.staff!.email, users.staff!.password);
      for (const res of [anonymous, asMember, await staff.get('/rss')]) {
        expect(res.body).toMatch(/^<\?xml version="1.0" encoding="UTF-8"\?>\n<rss version="2.0">/);
        expect(res.body).toContain('<title>Open &lt;news&gt; &amp; notes</title>');
        expect(res.body).toContain(`/post/${ids.earlyOver}</link>`);
        expect(res.body).not.toContain(`/post/${ids.gated}<`);
        expect(res.body).not.toContain(`/post/${ids.early}<`);
        expect(res.body).not.toContain(`/post/${ids.unpublished}<`);
        expect(res.body).not.toContain('vault code');
        expect(res.body.match(/<item>/g)).toHaveLength(2);
      }
    });

    it('stays full when the newest posts are all gated: gated posts are left out before the item limit', async () => {
      const now = t.clock.now();
      const gated = Array.from({ length: 260 }, (_, i) => ({
        pst_usr_user_id: author, pst_title: `Gated ${i}`, pst_body: BODY, pst_is_published: true, pst_tier_min_level: 10,
        pst_published_time: now, pst_create_time: now, pst_update_time: now,
      }));
      const made = await (t.services.db as any).insertInto('pst_posts').values(gated).returning('pst_post_id').execute();
      try {
        const res = await t.request({ method: 'GET', url: '/rss' });
        expect(res.statusCode).toBe(200);
        expect(res.body).toContain(`/post/${ids.open}</link>`);
        expect(res.body).toContain(`/post/${ids.earlyOver}</link>`);
        expect(res.body).not.toContain('vault code');
      } finally {
        await (t.services.db as any).deleteFrom('pst_posts').where('pst_post_id', 'in', made.map((r: any) => r.pst_post_id)).execute();
      }
    });
  });

  describe('the post page', () => {
    it('shows an anonymous reader the sign-in prompt, a tierless member the upgrade prompt, and a member the body', async () => {
      await t.services.settings.set('tier_gate_preview_length', 15);
      try {
        const anon = await webClient(t).get(`/post/${ids.gated}`);
        expect(anon.statusCode).toBe(200);
        expect(anon.body).toContain('id="gate-prompt"');
        expect(anon.body).toContain(`/login?next=%2Fpost%2F${ids.gated}`);
        expect(anon.body).toContain('Members only. T');
        expect(anon.body).not.toContain('vault code');
        const tierless = await signIn(t, users.tierless!.email, users.tierless!.password);
        const low = await tierless.get(`/post/${ids.gated}`);
        expect(low.body).toContain('needs the <strong>Premium</strong> tier');
        expect(low.body).not.toContain('vault code');
        const member = await signIn(t, users.premium!.email, users.premium!.password);
        const full = await member.get(`/post/${ids.gated}`);
        expect(full.body).toContain('id="post-body"');
        expect(full.body).toContain('vault code');
      } finally {
        await t.services.settings.set('tier_gate_preview_length', 0);
      }
    });

    it('sends a tierless member where the prompt destination says: the upgrade URL, the tier products, or the contact message', async () => {
      const tierless = await signIn(t, users.tierless!.email, users.tierless!.password);
      const prompt = async () => /<div class="card notice" id="gate-prompt">([\s\S]*?)<\/div>/.exec((await tierless.get(`/post/${ids.gated}`)).body)![1]!;

      const contact = await prompt();
      expect(contact).toContain('Contact us to upgrade your membership and see this content.');
      expect(contact).not.toContain('<a ');

      await t.services.settings.set('tier_upgrade_url', 'https://members.example.com/plans');
      try {
        expect(await prompt()).toContain('<a href="https://members.example.com/plans">Upgrade your membership</a>');
      } finally {
        await t.services.settings.set('tier_upgrade_url', '');
      }

      const product = await tierProduct('Premium yearly', 'premium-yearly', premium.tierId);
      await t.services.settings.set('products_active', true);
      await t.services.settings.set('subscriptions_active', true);
      try {
        const products = await prompt();
        // Each product leads to the member's subscription page, where a plan is chosen or upgraded.
        expect(products).toMatch(/^<p>Reading on needs the <strong>Premium<\/strong> tier or higher\.<\/p><ul><li><strong>Premium<\/strong>: /);
        expect(products).toContain(`<a href="/profile/subscription#change-tier" data-product="${product.pro_product_id}">Premium yearly</a></li></ul>`);
        expect(products).not.toContain('/product/');
        expect(products).not.toContain('Contact us');
        const target = await tierless.get('/profile/subscription');
        expect(target.statusCode).toBe(200);
        expect(target.body).toContain('id="change-tier"');
        expect(target.body).toContain(`data-product="${product.pro_product_id}"`);
      } finally {
        await t.services.settings.set('products_active', false);
        await t.services.settings.set('subscriptions_active', false);
        await (t.services.db as any).deleteFrom('pro_products').where('pro_product_id', '=', product.pro_product_id).execute();
      }
    });

    it('answers 404 for an unpublished post to non-staff', async () => {
      expect((await webClient(t).get(`/post/${ids.unpublished}`)).statusCode).toBe(404);
    });
  });

  it('property: a denied viewer’s response never contains the gated body text', async () => {
    const levels = [null, 10, 20, 30] as const;
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...levels),
        fc.constantFrom('tierless', 'basic', 'premium'),
        fc.constantFrom(0, 5, 40),
        fc.stringMatching(/^[a-z]{8}$/),
        async (minLevel, kind, previewLength, marker) => {
          await t.services.settings.set('tier_gate_preview_length', previewLength);
          const hidden = `zq${marker}zq`;
          const id = await post({ pst_title: 'P', pst_body: `<p>${'x'.repeat(60)} ${hidden}</p>`, pst_tier_min_level: minLevel });
          const viewerLevel = { tierless: null, basic: 10, premium: 20 }[kind];
          const denied = minLevel !== null && (viewerLevel === null || viewerLevel < minLevel);
          const single = await read(kind, id);
          const page = await t.request({ method: 'GET', url: `/api/v1/Posts?numperpage=1000`, headers: sessionOf[kind] });
          expect(single.json.data.tier_access.allowed).toBe(!denied);
          if (denied) {
            expect(single.body).not.toContain(hidden);
            expect(page.body).not.toContain(hidden);
          } else {
            expect(single.body).toContain(hidden);
          }
        },
      ),
      { numRuns: 20 },
    );
    await t.services.settings.set('tier_gate_preview_length', 0);
  });
});
