import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createTier, type TestTier } from '../helpers/tiers.js';

// Every gatable model exports tier_access and gives a denied reader the preview in place of its gated
// body columns (the first one) and null (the others), single and listed.

const FILLER = 'Opening words of the body. ';
const secret = (column: string) => `zqsecret-${column}-qz`;

let t: TestApp;
let premium: TestTier;
let tierless: Record<string, string>;
let member: Record<string, string>;
let eventId: number;

beforeAll(async () => {
  t = await createTestApp();
  premium = await createTier(t, { name: 'premium', displayName: 'Premium', level: 20 });
  tierless = (await t.keyHeaders()).headers;
  const m = await t.keyHeaders();
  await t.services.tiers.membership.assignManually(m.userId, premium.tierId, null);
  member = m.headers;
  eventId = await insert('evt_events', 'evt_event_id', { evt_name: 'Host event' });
});
afterAll(async () => t.close());

async function insert(table: string, key: string, values: Record<string, unknown>): Promise<number> {
  const row = await (t.services.db as any).insertInto(table).values(values).returning(key).executeTakeFirstOrThrow();
  return Number(row[key]);
}

interface Case {
  className: string;
  table: string;
  key: string;
  level: string;
  values: () => Record<string, unknown>;
  body: string[];
}

const text = (column: string) => `<p>${FILLER}${secret(column)}</p>`;
const cases: Case[] = [
  { className: 'Page', table: 'pag_pages', key: 'pag_page_id', level: 'pag_tier_min_level', values: () => ({ pag_title: 'Page', pag_published_time: new Date('2026-01-01T00:00:00Z'), pag_component_layout: JSON.stringify({ html: text('pag_component_layout') }) }), body: ['pag_component_layout'] },
  { className: 'Event', table: 'evt_events', key: 'evt_event_id', level: 'evt_tier_min_level', values: () => ({ evt_name: 'Event', evt_description: text('evt_description') }), body: ['evt_description'] },
  {
    className: 'Product',
    table: 'pro_products',
    key: 'pro_product_id',
    level: 'pro_tier_min_level',
    values: () => ({ pro_name: 'Product', pro_link: 'product', pro_description: text('pro_description'), pro_digital_link: secret('pro_digital_link'), pro_after_purchase_message: text('pro_after_purchase_message') }),
    body: ['pro_description', 'pro_digital_link', 'pro_after_purchase_message'],
  },
  { className: 'Video', table: 'vid_videos', key: 'vid_video_id', level: 'vid_tier_min_level', values: () => ({ vid_title: 'Video', vid_video_number: `${FILLER}${secret('vid_video_number')}`, vid_video_text: text('vid_video_text') }), body: ['vid_video_number', 'vid_video_text'] },
  { className: 'EventSession', table: 'evs_event_sessions', key: 'evs_event_session_id', level: 'evs_tier_min_level', values: () => ({ evs_evt_event_id: eventId, evs_is_public: true, evs_title: 'Session', evs_content: text('evs_content'), evs_links: secret('evs_links') }), body: ['evs_content', 'evs_links'] },
  { className: 'MailingList', table: 'mlt_mailing_lists', key: 'mlt_mailing_list_id', level: 'mlt_tier_min_level', values: () => ({ mlt_name: 'List', mlt_link: 'list' }), body: [] },
];

describe('gatable models', () => {
  for (const c of cases) {
    it(`${c.className}: tier_access, and the gated body replaced by the preview for a denied reader (single and listed)`, async () => {
      const id = await insert(c.table, c.key, { ...c.values(), [c.level]: 20 });
      await t.services.settings.set('tier_gate_preview_length', 10);
      try {
        const denied = await t.request({ method: 'GET', url: `/api/v1/${c.className}/${id}`, headers: tierless });
        expect(denied.statusCode, denied.body).toBe(200);
        expect(denied.json.data.tier_access).toMatchObject({ allowed: false, reason: 'tier_too_low', required_level: 20, user_level: null, required_tier: { tier_id: premium.tierId } });
        c.body.forEach((column, i) => {
          const stored = c.values()[column];
          // The first gated column becomes the plain-text preview (null for a non-text column), the others null.
          const preview = i === 0 && typeof stored === 'string' && !stored.startsWith('{') ? 'Opening wo' : null;
          expect(denied.json.data[column], column).toBe(preview);
        });
        const listed = await t.request({ method: 'GET', url: `/api/v1/${c.className}s?numperpage=1000`, headers: tierless });
        const row = listed.json.data.find((r: Record<string, unknown>) => r[c.key] === id);
        expect(row.tier_access.allowed).toBe(false);
        for (const res of [denied, listed]) expect(res.body).not.toMatch(/zqsecret/);

        const allowed = await t.request({ method: 'GET', url: `/api/v1/${c.className}/${id}`, headers: member });
        expect(allowed.json.data.tier_access).toMatchObject({ allowed: true, reason: null, required_level: 20, user_level: 20 });
        for (const column of c.body) expect(JSON.stringify(allowed.json.data[column]), column).toContain(secret(column));
      } finally {
        await t.services.settings.set('tier_gate_preview_length', 0);
      }
    });
  }
});

describe('the is-viewable check before the gate', () => {
  it('a private event (evt_visibility 0) is not found for members, single or listed; staff see it', async () => {
    const hidden = await insert('evt_events', 'evt_event_id', { evt_name: 'Board meeting', evt_visibility: 0 });
    const shown = await insert('evt_events', 'evt_event_id', { evt_name: 'Open meeting', evt_visibility: 1 });
    const single = await t.request({ method: 'GET', url: `/api/v1/Event/${hidden}`, headers: member });
    expect(single.statusCode).toBe(400);
    expect(single.json).toMatchObject({ errortype: 'TransactionError', error: 'Event not found' });
    const list = await t.request({ method: 'GET', url: '/api/v1/Events?numperpage=1000', headers: member });
    const ids = list.json.data.map((e: { evt_event_id: number }) => e.evt_event_id);
    expect(ids).toContain(shown);
    expect(ids).not.toContain(hidden);
    expect(list.json.num_results).toBe(ids.length);
    const staff = (await t.staffHeaders()).headers;
    expect((await t.request({ method: 'GET', url: `/api/v1/Event/${hidden}`, headers: staff })).statusCode).toBe(200);
    const all = await t.request({ method: 'GET', url: '/api/v1/Events?numperpage=1000', headers: staff });
    expect(all.json.num_results).toBe(ids.length + 1);
  });

  it("a video above the reader's permission, or of a group the reader is not in, is not found for them", async () => {
    const { userId: insiderId, headers: insider } = await t.keyHeaders();
    const group = await insert('grp_groups', 'grp_group_id', { grp_name: 'film club', grp_category: 'club' });
    await insert('grm_group_members', 'grm_group_member_id', { grm_grp_group_id: group, grm_foreign_key_id: insiderId });
    const staffOnly = await insert('vid_videos', 'vid_video_id', { vid_title: 'Staff briefing', vid_min_permission: 5 });
    const clubOnly = await insert('vid_videos', 'vid_video_id', { vid_title: 'Club screening', vid_grp_group_id: group });
    const open = await insert('vid_videos', 'vid_video_id', { vid_title: 'Trailer', vid_min_permission: 0 });
    const read = (id: number, headers: Record<string, string>) => t.request({ method: 'GET', url: `/api/v1/Video/${id}`, headers });
    expect((await read(staffOnly, member)).json.error).toBe('Video not found');
    expect((await read(clubOnly, member)).statusCode).toBe(400);
    expect((await read(clubOnly, insider)).statusCode).toBe(200);
    expect((await read(open, member)).statusCode).toBe(200);
    const listed = async (headers: Record<string, string>) =>
      (await t.request({ method: 'GET', url: '/api/v1/Videos?numperpage=1000', headers })).json.data.map((v: { vid_video_id: number }) => v.vid_video_id);
    expect(await listed(member)).toEqual(expect.arrayContaining([open]));
    expect(await listed(member)).not.toEqual(expect.arrayContaining([staffOnly]));
    expect(await listed(member)).not.toEqual(expect.arrayContaining([clubOnly]));
    expect(await listed(insider)).toEqual(expect.arrayContaining([open, clubOnly]));
    expect(await listed((await t.staffHeaders()).headers)).toEqual(expect.arrayContaining([open, clubOnly, staffOnly]));
  });
});
