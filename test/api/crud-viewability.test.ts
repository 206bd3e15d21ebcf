import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { models } from '../../src/models/index.js';
import { collectionScope } from '../../src/surfaces/crud/authorize.js';
import { loadCollection, loadRow, parseCollectionParams } from '../../src/surfaces/crud/query.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createTier } from '../helpers/tiers.js';

// Issue 22, items 6 and 7. Every public-read model applies its one declared is-viewable rule (published
// state, visibility, a parent's tier gate) to single reads and listings alike, for every non-staff
// reader; staff see every row. Workflow-bearing models are written over CRUD by staff only: to members
// their write verbs are not exposed.

type Headers = Record<string, string>;
const HOUR = 3600_000;

let t: TestApp;
let staff: Headers;
let tierless: Headers;
let low: Headers;
let premium: Headers;
let author: { headers: Headers; userId: number };

async function insert(table: string, key: string, values: Record<string, unknown>): Promise<number> {
  const row = await (t.services.db as any).insertInto(table).values(values).returning(key).executeTakeFirstOrThrow();
  return Number(row[key]);
}

const get = (url: string, headers: Headers) => t.request({ method: 'GET', url: `/api/v1${url}`, headers });

interface Fixture {
  className: string;
  key: string;
  /** Seen by every reader. */
  open: Record<string, number>;
  /** Hidden from every non-staff reader. */
  hidden: Record<string, number>;
  /** Hidden below tier level 20, seen at 20. */
  gated: Record<string, number>;
}
const fixtures: Fixture[] = [];
let unapprovedByAuthor: number;
let scheduledPage: number;

beforeAll(async () => {
  t = await createTestApp();
  const basic = await createTier(t, { name: 'basic', level: 10 });
  const top = await createTier(t, { name: 'premium', level: 20 });
  staff = (await t.staffHeaders()).headers;
  tierless = (await t.keyHeaders()).headers;
  const l = await t.keyHeaders();
  await t.services.tiers.membership.assignManually(l.userId, basic.tierId, null);
  low = l.headers;
  const p = await t.keyHeaders();
  await t.services.tiers.membership.assignManually(p.userId, top.tierId, null);
  premium = p.headers;
  author = await t.keyHeaders();

  const now = t.clock.nowMs();
  const past = new Date(now - 24 * HOUR);
  const future = new Date(now + 24 * HOUR);

  const page = (values: Record<string, unknown>) => insert('pag_pages', 'pag_page_id', { pag_title: 'Page', ...values });
  scheduledPage = await page({ pag_published_time: future });
  fixtures.push({
    className: 'Page',
    key: 'pag_page_id',
    open: { published: await page({ pag_published_time: past }), gatedButPublished: await page({ pag_published_time: past, pag_tier_min_level: 20 }) },
    hidden: { draft: await page({ pag_published_time: null }), scheduled: scheduledPage },
    gated: {},
  });
  await page({ pag_published_time: past, pag_delete_time: past });

  const location = (values: Record<string, unknown>) => insert('loc_locations', 'loc_location_id', { loc_name: 'Hall', loc_link: `hall-${Math.random()}`, ...values });
  fixtures.push({
    className: 'Location',
    key: 'loc_location_id',
    open: { published: await location({ loc_is_published: true }) },
    hidden: { unpublished: await location({ loc_is_published: false }), unset: await location({ loc_is_published: null }) },
    gated: {},
  });

  const event = (values: Record<string, unknown>) => insert('evt_events', 'evt_event_id', { evt_name: 'Event', evt_create_time: past, ...values });
  const events = {
    open: await event({ evt_visibility: 1 }),
    private: await event({ evt_visibility: 0 }),
    gated: await event({ evt_tier_min_level: 20 }),
    // Early access over (created a day ago, one hour of it): open to everyone.
    earlyOver: await event({ evt_tier_min_level: 20, evt_tier_public_after_hours: 1 }),
    deleted: await event({ evt_delete_time: past }),
  };
  const session = (eventId: number, values: Record<string, unknown> = {}) =>
    insert('evs_event_sessions', 'evs_event_session_id', { evs_evt_event_id: eventId, evs_title: 'Session', evs_is_public: true, ...values });
  fixtures.push({
    className: 'EventSession',
    key: 'evs_event_session_id',
    open: { public: await session(events.open), ofEarlyAccessOver: await session(events.earlyOver), ownGate: await session(events.open, { evs_tier_min_level: 20 }) },
    hidden: {
      notPublic: await session(events.open, { evs_is_public: false }),
      unset: await session(events.open, { evs_is_public: null }),
      ofPrivateEvent: await session(events.private),
      ofDeletedEvent: await session(events.deleted),
    },
    gated: { ofGatedEvent: await session(events.gated) },
  });
  await session(events.open, { evs_delete_time: past });

  const post = (values: Record<string, unknown>) =>
    insert('pst_posts', 'pst_post_id', { pst_usr_user_id: author.userId, pst_is_published: true, pst_published_time: past, pst_create_time: past, ...values });
  const posts = {
    open: await post({}),
    draft: await post({ pst_is_published: false }),
    scheduled: await post({ pst_published_time: future }),
    gated: await post({ pst_tier_min_level: 20 }),
    deleted: await post({ pst_delete_time: past }),
  };
  const comment = (postId: number, values: Record<string, unknown> = {}) =>
    insert('cmt_comments', 'cmt_comment_id', { cmt_pst_post_id: postId, cmt_body: 'A comment', cmt_is_approved: true, ...values });
  unapprovedByAuthor = await comment(posts.open, { cmt_is_approved: false, cmt_usr_user_id: author.userId });
  fixtures.push({
    className: 'Comment',
    key: 'cmt_comment_id',
    open: { approved: await comment(posts.open) },
    hidden: {
      unapproved: unapprovedByAuthor,
      unset: await comment(posts.open, { cmt_is_approved: null }),
      onDraft: await comment(posts.draft),
      onScheduled: await comment(posts.scheduled),
      onDeletedPost: await comment(posts.deleted),
    },
    gated: { onGatedPost: await comment(posts.gated) },
  });
  await comment(posts.open, { cmt_delete_time: past });
});
afterAll(async () => t.close());

const ids = (r: Record<string, number>) => Object.values(r);

/** Every id a listing shows the reader (one page of up to 1000), and its num_results. */
async function listed(f: Fixture, headers: Headers): Promise<{ ids: number[]; total: number }> {
  const res = await get(`/${f.className}s?numperpage=1000`, headers);
  expect(res.statusCode, res.body).toBe(200);
  return { ids: res.json.data.map((r: Record<string, number>) => r[f.key]).sort((a: number, b: number) => a - b), total: res.json.num_results };
}

const sorted = (list: number[]) => [...list].sort((a, b) => a - b);

describe('the is-viewable rule of each public-read model', () => {
  describe.each(['Page', 'Location', 'EventSession', 'Comment'])('%s', (className) => {
    const f = () => fixtures.find((x) => x.className === className)!;

    it('hides unpublished, private and parent-gated rows from a tierless and a too-low member: not found singly, not listed, not counted', async () => {
      for (const headers of [tierless, low]) {
        for (const [name, id] of Object.entries({ ...f().hidden, ...f().gated })) {
          const res = await get(`/${className}/${id}`, headers);
          expect(res.statusCode, name).toBe(400);
          expect(res.json, name).toMatchObject({ errortype: 'TransactionError', error: `${className} not found` });
        }
        for (const [name, id] of Object.entries(f().open)) expect((await get(`/${className}/${id}`, headers)).statusCode, name).toBe(200);
        const list = await listed(f(), headers);
        expect(list.ids).toEqual(sorted(ids(f().open)));
        expect(list.total).toBe(ids(f().open).length);
        // A page past the end counts in a statement of its own: the same rule.
        const past = await get(`/${className}s?numperpage=1&page=50`, headers);
        expect(past.json).toMatchObject({ num_results: ids(f().open).length, data: [] });
      }
    });

    it('shows a member of the required tier the rows of a gated parent, and nothing else hidden', async () => {
      const expected = sorted([...ids(f().open), ...ids(f().gated)]);
      const list = await listed(f(), premium);
      expect(list.ids).toEqual(expected);
      expect(list.total).toBe(expected.length);
      for (const id of ids(f().gated)) expect((await get(`/${className}/${id}`, premium)).statusCode).toBe(200);
      for (const id of ids(f().hidden)) if (id !== unapprovedByAuthor) expect((await get(`/${className}/${id}`, premium)).statusCode).toBe(400);
    });

    it('shows staff every live row, singly and listed', async () => {
      const all = sorted([...ids(f().open), ...ids(f().hidden), ...ids(f().gated)]);
      const list = await listed(f(), staff);
      expect(list.ids).toEqual(all);
      expect(list.total).toBe(all.length);
      for (const id of all) expect((await get(`/${className}/${id}`, staff)).statusCode).toBe(200);
    });

    it('hides the same rows from an anonymous reader (no user, no tier) at the query layer', async () => {
      const model = models.get(className)!;
      const reader = { viewer: { current_user_id: null, current_user_permission: 0 }, tierLevel: null, now: t.clock.now() };
      for (const id of [...ids(f().hidden), ...ids(f().gated)]) expect(await loadRow(t.services.db, model, id, false, reader)).toBeUndefined();
      for (const id of ids(f().open)) expect(await loadRow(t.services.db, model, id, false, reader)).toBeDefined();
      const params = { ...parseCollectionParams(model, { numperpage: '1000' }), reader };
      const { total, rows } = await loadCollection(t.services.db, model, collectionScope(model, reader.viewer), params);
      expect(sorted(rows.map((r) => Number(r[f().key])))).toEqual(sorted(ids(f().open)));
      expect(total).toBe(ids(f().open).length);
    });
  });

  it('answers a request with no credentials before any row (the CRUD surface has no anonymous reader)', async () => {
    for (const className of ['Page', 'Location', 'EventSession', 'Comment']) {
      const res = await t.request({ method: 'GET', url: `/api/v1/${className}s` });
      expect(res.statusCode).toBe(400);
      expect(res.json.errortype).toBe('AuthenticationError');
      // The error envelope's data, with no row in it.
      expect(res.json.data).toEqual({});
    }
  });

  it("lets a comment's author see it while it awaits moderation, and nobody else but staff", async () => {
    expect((await get(`/Comment/${unapprovedByAuthor}`, author.headers)).statusCode).toBe(200);
    const list = await get('/Comments?numperpage=1000', author.headers);
    expect(list.json.data.map((c: { cmt_comment_id: number }) => c.cmt_comment_id)).toContain(unapprovedByAuthor);
    expect(list.json.num_results).toBe(list.json.data.length);
    expect((await get(`/Comment/${unapprovedByAuthor}`, tierless)).statusCode).toBe(400);
  });

  it('shows a scheduled page once its publish time is reached', async () => {
    expect((await get(`/Page/${scheduledPage}`, tierless)).statusCode).toBe(400);
    t.clock.advance(25 * HOUR);
    try {
      expect((await get(`/Page/${scheduledPage}`, tierless)).statusCode).toBe(200);
      expect((await listed(fixtures.find((x) => x.className === 'Page')!, tierless)).ids).toContain(scheduledPage);
    } finally {
      t.clock.advance(-25 * HOUR);
    }
  });

  it("keeps a session's own tier gate a preview (tier_access denied), where its gated event's sessions are not found", async () => {
    const f = fixtures.find((x) => x.className === 'EventSession')!;
    const own = await get(`/EventSession/${f.open.ownGate}`, tierless);
    expect(own.statusCode).toBe(200);
    expect(own.json.data.tier_access).toMatchObject({ allowed: false, reason: 'tier_too_low', required_level: 20 });
    expect((await get(`/EventSession/${f.gated.ofGatedEvent}`, tierless)).json.error).toBe('EventSession not found');
  });
});

describe('workflow-bearing models are written over CRUD by staff only', () => {
  const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
  let member: { headers: Headers; userId: number };
  let readOnlyMember: Headers;
  let resourceId: number;
  let questionId: number;
  let listId: number;

  beforeAll(async () => {
    await t.services.plugins.setActive('bookings', true);
    member = await t.keyHeaders();
    readOnlyMember = (await t.keyHeaders({ permission: 1 })).headers;
    resourceId = await insert('bkr_booking_resources', 'bkr_booking_resource_id', { bkr_name: 'Room', bkr_slot_minutes: 30, bkr_weekly_availability: JSON.stringify({ mon: [['09:00', '17:00']] }) });
    questionId = await insert('qst_questions', 'qst_question_id', { qst_question: 'Why?' });
    listId = await insert('mlt_mailing_lists', 'mlt_mailing_list_id', { mlt_name: 'News', mlt_link: 'news' });
  });

  interface WriteCase {
    className: string;
    table: string;
    key: string;
    owner: string;
    create: () => Record<string, string>;
    /** A row the member owns, written straight to the table. */
    stored: (userId: number) => Record<string, unknown>;
    change: Record<string, string>;
  }
  let slot = 0;
  const cases: WriteCase[] = [
    {
      className: 'Booking',
      table: 'bkg_bookings',
      key: 'bkg_booking_id',
      owner: 'bkg_usr_user_id',
      create: () => {
        const start = new Date(Date.UTC(2026, 2, 2, 9, 0) + 30 * 60_000 * slot++);
        const fmt = (d: Date) => d.toISOString().slice(0, 19).replace('T', ' ');
        return { bkg_bkr_booking_resource_id: String(resourceId), bkg_start_time: fmt(start), bkg_end_time: fmt(new Date(start.getTime() + 30 * 60_000)) };
      },
      // A live booking's (resource, start) is unique: each stored row takes a slot of its own.
      stored: (userId) => {
        const start = new Date(Date.UTC(2026, 2, 9, 10, 0) + 30 * 60_000 * slot++);
        return { bkg_bkr_booking_resource_id: resourceId, bkg_usr_user_id: userId, bkg_start_time: start, bkg_end_time: new Date(start.getTime() + 30 * 60_000), bkg_status: 'confirmed' };
      },
      change: { bkg_status: 'cancelled' },
    },
    {
      className: 'SurveyAnswer',
      table: 'sva_survey_answers',
      key: 'sva_survey_answer_id',
      owner: 'sva_usr_user_id',
      create: () => ({ sva_qst_question_id: String(questionId), sva_answer: 'Because' }),
      stored: (userId) => ({ sva_qst_question_id: questionId, sva_usr_user_id: userId, sva_answer: 'Because' }),
      change: { sva_answer: 'Changed' },
    },
    {
      className: 'MailingListRegistrant',
      table: 'mlr_mailing_list_registrants',
      key: 'mlr_mailing_list_registrant_id',
      owner: 'mlr_usr_user_id',
      create: () => ({ mlr_mlt_mailing_list_id: String(listId) }),
      stored: (userId) => ({ mlr_mlt_mailing_list_id: listId, mlr_usr_user_id: userId }),
      change: { mlr_change_time: '2026-03-05 06:07:08' },
    },
  ];

  const count = async (c: WriteCase) => Number(((await (t.services.db as any).selectFrom(c.table).select((eb: any) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()) as { n: unknown }).n);
  const stored = async (c: WriteCase, id: number) => (t.services.db as any).selectFrom(c.table).selectAll().where(c.key, '=', id).executeTakeFirstOrThrow();

  describe.each(cases.map((c) => [c.className, c] as const))('%s', (className, c) => {
    it('answers a member the 404 of an unexposed verb on POST, PUT and DELETE, even of their own row and before the key capability', async () => {
      const own = await insert(c.table, c.key, c.stored(member.userId));
      const before = await stored(c, own);
      const rows = await count(c);
      for (const headers of [member.headers, readOnlyMember]) {
        const attempts = [
          ['POST', `/api/v1/${className}`, await t.request({ method: 'POST', url: `/api/v1/${className}`, headers: { ...headers, ...FORM }, payload: new URLSearchParams(c.create()).toString() })],
          ['PUT', `/api/v1/${className}/${own}`, await t.request({ method: 'PUT', url: `/api/v1/${className}/${own}?${new URLSearchParams(c.change).toString()}`, headers })],
          ['DELETE', `/api/v1/${className}/${own}`, await t.request({ method: 'DELETE', url: `/api/v1/${className}/${own}`, headers })],
        ] as const;
        for (const [method, path, res] of attempts) {
          expect(res.statusCode, res.body).toBe(404);
          // The answer of a path that names no class.
          expect(res.json).toMatchObject({ errortype: 'NotFound', error: `No API endpoint ${method} ${path}` });
        }
      }
      expect(await count(c)).toBe(rows);
      expect(await stored(c, own)).toEqual(before);
      // Reads are as they were: the owner reads the row.
      const read = await get(`/${className}/${own}`, member.headers);
      expect(read.statusCode).toBe(200);
      expect(read.json.data[c.key]).toBe(own);
    });

    it('lets staff create, update and delete over CRUD', async () => {
      const made = await t.request({ method: 'POST', url: `/api/v1/${className}`, headers: { ...staff, ...FORM }, payload: new URLSearchParams(c.create()).toString() });
      expect(made.statusCode, made.body).toBe(200);
      expect(made.json.success_message).toBe(`New ${className} successful.`);
      const id = made.json.data[c.key];
      const own = await insert(c.table, c.key, c.stored(member.userId));
      const upd = await t.request({ method: 'PUT', url: `/api/v1/${className}/${own}?${new URLSearchParams(c.change).toString()}`, headers: staff });
      expect(upd.statusCode, upd.body).toBe(200);
      for (const [k, v] of Object.entries(c.change)) expect(upd.json.data[k]).toBe(v);
      expect(upd.json.data[c.owner]).toBe(member.userId);
      const del = await t.request({ method: 'DELETE', url: `/api/v1/${className}/${id}`, headers: staff });
      expect(del.statusCode, del.body).toBe(200);
      expect(del.json.success_message).toBe('Deletion successful.');
    });
  });

  it('leaves owner-written models as they were: a member still writes their own message', async () => {
    const sent = await t.request({ method: 'POST', url: '/api/v1/Message', headers: { ...member.headers, ...FORM }, payload: 'msg_body=hello' });
    expect(sent.statusCode).toBe(200);
    const upd = await t.request({ method: 'PUT', url: `/api/v1/Message/${sent.json.data.msg_message_id}?msg_body=edited`, headers: member.headers });
    expect(upd.json.data.msg_body).toBe('edited');
  });
});
