import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { signIn, webClient } from '../helpers/browser-session.js';
import { createTier, type TestTier } from '../helpers/tiers.js';
import { xmlProblems } from '../helpers/xml.js';

// The access check as every content path applies it, over viewer kinds × entity states: soft delete,
// then published state (a row the reader may not see is not found), then the tier gate, last.

const SECRET = 'The gated body: vault code 7731.';
const BODY = `<p>Members only. ${SECRET}</p>`;

type ViewerKind = 'anonymous' | 'tierless' | 'lower' | 'equal' | 'higher' | 'staff';
type EntityState = 'no gate' | 'gated' | 'gated, inside early access' | 'gated, early access over' | 'soft-deleted' | 'unpublished';
const STATES: EntityState[] = ['no gate', 'gated', 'gated, inside early access', 'gated, early access over', 'soft-deleted', 'unpublished'];
const SIGNED_IN: Exclude<ViewerKind, 'anonymous'>[] = ['tierless', 'lower', 'equal', 'higher', 'staff'];

let t: TestApp;
let tiers: Record<'basic' | 'premium' | 'gold', TestTier>;
const users: Record<string, { email: string; password: string; userId: number; headers: Record<string, string> }> = {};
const ids = {} as Record<EntityState, number>;
const levels: Record<ViewerKind, number | null> = { anonymous: null, tierless: null, lower: 10, equal: 20, higher: 30, staff: null };

const summary = (tier: TestTier, displayName: string) => ({ tier_id: tier.tierId, name: tier.name, display_name: displayName, tier_level: tier.level });

beforeAll(async () => {
  t = await createTestApp();
  tiers = {
    basic: await createTier(t, { name: 'basic', displayName: 'Basic', level: 10 }),
    premium: await createTier(t, { name: 'premium', displayName: 'Premium', level: 20 }),
    gold: await createTier(t, { name: 'gold', displayName: 'Gold', level: 30 }),
  };
  const tierOf = { tierless: null, lower: tiers.basic, equal: tiers.premium, higher: tiers.gold, staff: null };
  for (const kind of SIGNED_IN) {
    const u = await t.createUser({ permission: kind === 'staff' ? 5 : 0 });
    const tier = tierOf[kind];
    if (tier) await t.services.tiers.membership.assignManually(u.userId, tier.tierId, null);
    users[kind] = { ...u, headers: (await t.login(u.email, u.password)).headers };
  }
  const now = t.clock.now();
  const hoursAgo = (h: number) => new Date(t.clock.nowMs() - h * 3600_000);
  const insert = async (values: Record<string, unknown>) => {
    const row = await (t.services.db as any)
      .insertInto('pst_posts')
      .values({
        pst_usr_user_id: users.staff!.userId,
        pst_title: 'Post',
        pst_body: BODY,
        pst_is_published: true,
        pst_published_time: hoursAgo(1),
        pst_create_time: hoursAgo(100),
        pst_update_time: now,
        ...values,
      })
      .returning('pst_post_id')
      .executeTakeFirstOrThrow();
    return Number(row.pst_post_id);
  };
  ids['no gate'] = await insert({});
  ids.gated = await insert({ pst_tier_min_level: 20 });
  ids['gated, inside early access'] = await insert({ pst_tier_min_level: 20, pst_tier_public_after_hours: 48, pst_published_time: hoursAgo(47) });
  ids['gated, early access over'] = await insert({ pst_tier_min_level: 20, pst_tier_public_after_hours: 48, pst_published_time: hoursAgo(48) });
  ids['soft-deleted'] = await insert({ pst_tier_min_level: 20, pst_delete_time: now });
  ids.unpublished = await insert({ pst_tier_min_level: 20, pst_is_published: false });
});
afterAll(async () => t.close());

/** The outcome in one word: not found, allowed, or the denial's reason. */
function outcome(kind: ViewerKind, state: EntityState): 'not found' | 'allowed' | 'not_logged_in' | 'tier_too_low' {
  if (state === 'soft-deleted') return 'not found';
  if (state === 'unpublished' && kind !== 'staff') return 'not found';
  const userLevel = levels[kind];
  if (state === 'no gate' || kind === 'staff' || state === 'gated, early access over' || (userLevel !== null && userLevel >= 20)) return 'allowed';
  return kind === 'anonymous' ? 'not_logged_in' : 'tier_too_low';
}

/** What the viewer gets for the entity: not found, or the contract's access result (every key). */
function expected(kind: ViewerKind, state: EntityState): 'not found' | Record<string, unknown> {
  if (outcome(kind, state) === 'not found') return 'not found';
  const premium = summary(tiers.premium, 'Premium');
  const gold = summary(tiers.gold, 'Gold');
  const userLevel = levels[kind];
  if (state === 'no gate') {
    return { allowed: true, reason: null, required_level: null, user_level: userLevel, required_tier: null, upgrade_options: [], prompt: null };
  }
  const open = kind === 'staff' || state === 'gated, early access over' || (userLevel !== null && userLevel >= 20);
  if (open) return { allowed: true, reason: null, required_level: 20, user_level: userLevel, required_tier: premium, upgrade_options: [], prompt: null };
  return {
    allowed: false,
    reason: kind === 'anonymous' ? 'not_logged_in' : 'tier_too_low',
    required_level: 20,
    user_level: userLevel,
    required_tier: premium,
    upgrade_options: [], // the store is inactive: no product is on sale
    prompt: { kind: 'contact', message: 'Contact us to upgrade your membership and see this content.' },
  };
}

describe('the access check: viewer kinds × entity states', () => {
  for (const kind of SIGNED_IN) {
    for (const state of STATES) {
      it(`API read: ${kind} viewer, ${state} post — ${outcome(kind, state)}`, async () => {
        const want = expected(kind, state);
        const res = await t.request({ method: 'GET', url: `/api/v1/Post/${ids[state]}`, headers: users[kind]!.headers });
        if (want === 'not found') {
          expect(res.statusCode).toBe(400);
          expect(res.json).toEqual({ api_version: '1.0', errortype: 'TransactionError', error: 'Post not found', data: {} });
          return;
        }
        expect(res.statusCode).toBe(200);
        expect(res.json.data.tier_access).toEqual(want);
        if (want.allowed) {
          expect(res.json.data.pst_body).toBe(BODY);
        } else {
          expect(res.json.data.pst_body).toBeNull();
          expect(res.body).not.toContain('vault code');
        }
      });
    }
  }

  for (const state of STATES) {
    it(`web page: anonymous viewer, ${state} post — ${outcome('anonymous', state)}`, async () => {
      const want = expected('anonymous', state);
      const res = await webClient(t).get(`/post/${ids[state]}`);
      if (want === 'not found') {
        expect(res.statusCode).toBe(404);
        expect(res.body).not.toContain('vault code');
        return;
      }
      expect(res.statusCode).toBe(200);
      if (want.allowed) {
        expect(res.body).toContain('id="post-body"');
        expect(res.body).toContain('vault code');
      } else {
        expect(res.body).toContain('id="gate-prompt"');
        expect(res.body).toContain(`/login?next=%2Fpost%2F${ids[state]}`);
        expect(res.body).not.toContain('vault code');
      }
    });
  }

  for (const hide of [false, true]) {
    it(`listings with tier_gate_hide_from_listings ${hide}: each viewer sees what the table says, and num_results counts exactly that`, async () => {
      await t.services.settings.set('tier_gate_hide_from_listings', hide);
      try {
        for (const kind of SIGNED_IN) {
          const res = await t.request({ method: 'GET', url: '/api/v1/Posts?numperpage=100', headers: users[kind]!.headers });
          expect(res.statusCode).toBe(200);
          const listed = STATES.filter((state) => {
            const want = expected(kind, state);
            return want !== 'not found' && (!hide || want.allowed === true);
          });
          expect(res.json.data.map((p: { pst_post_id: number }) => p.pst_post_id), kind).toEqual(listed.map((s) => ids[s]));
          expect(res.json.num_results, kind).toBe(listed.length);
          for (const row of res.json.data) {
            const want = expected(kind, STATES.find((s) => ids[s] === row.pst_post_id)!);
            expect(row.tier_access, `${kind} ${row.pst_post_id}`).toEqual(want);
            expect(row.pst_body, `${kind} ${row.pst_post_id}`).toBe((want as { allowed: boolean }).allowed ? BODY : null);
          }
        }
      } finally {
        await t.services.settings.set('tier_gate_hide_from_listings', false);
      }
    });
  }

  it('RSS, whoever asks, is well-formed XML listing exactly the posts open to everyone', async () => {
    const staff = await signIn(t, users.staff!.email, users.staff!.password);
    const member = await signIn(t, users.higher!.email, users.higher!.password);
    for (const res of [await webClient(t).get('/rss'), await staff.get('/rss'), await member.get('/rss')]) {
      expect(res.statusCode).toBe(200);
      expect(xmlProblems(res.body)).toEqual([]);
      const links = [...res.body.matchAll(/<link>[^<]*\/post\/(\d+)<\/link>/g)].map((m) => Number(m[1])).sort((a, b) => a - b);
      expect(links).toEqual([ids['no gate'], ids['gated, early access over']].sort((a, b) => a - b));
    }
  });

  // Last: it adds a post to the site feed.
  it('RSS stays well-formed with markup characters, control characters and astral characters in a post', async () => {
    const now = t.clock.now();
    await (t.services.db as any)
      .insertInto('pst_posts')
      .values({
        pst_usr_user_id: users.staff!.userId,
        pst_title: 'Tom & Jerry <b>say</b> "hi" ]]> \u0008\u001bbell \uD83D\uDE00',
        pst_body: `<p>${'é'.repeat(299)}\uD83D\uDE00 tail</p>`,
        pst_is_published: true,
        pst_published_time: now,
        pst_create_time: now,
        pst_update_time: now,
      })
      .execute();
    const res = await webClient(t).get('/rss');
    expect(xmlProblems(res.body)).toEqual([]);
    expect(res.body).toContain('<title>Tom &amp; Jerry &lt;b&gt;say&lt;/b&gt; &quot;hi&quot; ]]&gt; bell \uD83D\uDE00</title>');
    // The summary is cut at 300 UTF-16 units, mid-surrogate-pair: the half is dropped, not sent.
    expect(res.body).toContain(`<description>${'é'.repeat(299)}</description>`);
  });
});
