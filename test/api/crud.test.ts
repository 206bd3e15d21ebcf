import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';

type Headers = Record<string, string>;
const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

describe('CRUD endpoints', () => {
  let t: TestApp;
  let staff: { headers: Headers; userId: number };
  let alice: { headers: Headers; userId: number };
  let bob: { headers: Headers; userId: number };

  const get = (url: string, headers: Headers) => t.request({ method: 'GET', url: `/api/v1${url}`, headers });
  const post = (url: string, headers: Headers, fields: Record<string, string>) =>
    t.request({ method: 'POST', url: `/api/v1${url}`, headers: { ...headers, ...FORM }, payload: form(fields) });
  const put = (url: string, headers: Headers, fields: Record<string, string>) =>
    t.request({ method: 'PUT', url: `/api/v1${url}?${form(fields)}`, headers });
  const del = (url: string, headers: Headers) => t.request({ method: 'DELETE', url: `/api/v1${url}`, headers });

  beforeAll(async () => {
    t = await createTestApp();
    staff = await t.keyHeaders({ permission: 4, userPermission: 5 });
    alice = await t.keyHeaders({ permission: 4 });
    bob = await t.keyHeaders({ permission: 4 });
  });
  afterAll(async () => t.close());

  describe('owner versus other versus staff', () => {
    let msgId: number;
    // A message its sender owns, with no recipient. (Mailing-list registrations, survey answers and
    // bookings are workflow: members do not write them over CRUD; see crud-viewability.)
    beforeAll(async () => {
      const created = await post('/Message', alice.headers, { msg_body: 'note to self' });
      expect(created.statusCode).toBe(200);
      msgId = created.json.data.msg_message_id;
    });

    it('lets the owner and staff read a row, and refuses another user with 403', async () => {
      expect((await get(`/Message/${msgId}`, alice.headers)).statusCode).toBe(200);
      expect((await get(`/Message/${msgId}`, staff.headers)).statusCode).toBe(200);
      const other = await get(`/Message/${msgId}`, bob.headers);
      expect(other.statusCode).toBe(403);
      expect(other.json.errortype).toBe('AuthenticationError');
    });

    it('lets the owner and staff update, and refuses another user before applying input', async () => {
      const denied = await put(`/Message/${msgId}`, bob.headers, { msg_sent_time: '2026-01-01 00:00:00' });
      expect(denied.statusCode).toBe(403);
      const mine = await put(`/Message/${msgId}`, alice.headers, { msg_sent_time: '2026-01-02 03:04:05' });
      expect(mine.statusCode).toBe(200);
      expect(mine.json.success_message).toBe('Message update successful.');
      expect(mine.json.data.msg_sent_time).toBe('2026-01-02 03:04:05');
      expect((await put(`/Message/${msgId}`, staff.headers, { msg_sent_time: '2026-01-03 00:00:00' })).statusCode).toBe(200);
    });

    it('refuses another user delete, lets the owner delete, and the deleted row vanishes from reads', async () => {
      expect((await del(`/Message/${msgId}`, bob.headers)).statusCode).toBe(403);
      const res = await del(`/Message/${msgId}`, alice.headers);
      expect(res.statusCode).toBe(200);
      expect(res.json.success_message).toBe('Deletion successful.');
      expect(res.json.data.msg_delete_time).toBe('2026-03-01 12:00:00');
      const after = await get(`/Message/${msgId}`, alice.headers);
      expect(after.statusCode).toBe(400);
      expect(after.json.errortype).toBe('TransactionError');
      const list = await get('/Messages', staff.headers);
      expect(list.json.data.map((r: any) => r.msg_message_id)).not.toContain(msgId);
      expect((await put(`/Message/${msgId}`, alice.headers, {})).statusCode).toBe(400);
      expect((await del(`/Message/${msgId}`, alice.headers)).statusCode).toBe(400);
    });

    it('keeps owner-less models staff-only: a member gets 403 on write and an empty collection', async () => {
      expect((await post('/CouponCode', alice.headers, { ccd_code: 'X' })).statusCode).toBe(403);
      const made = await post('/CouponCode', staff.headers, { ccd_code: 'SPRING', ccd_percent_discount: '10' });
      expect(made.statusCode).toBe(200);
      const list = await get('/CouponCodes', alice.headers);
      expect(list.statusCode).toBe(200);
      expect(list.json).toMatchObject({ num_results: 0, data: [] });
      expect((await get(`/CouponCode/${made.json.data.ccd_coupon_code_id}`, alice.headers)).statusCode).toBe(403);
    });

    it('serves public-read models to everyone but lets only staff write them', async () => {
      const made = await post('/Location', staff.headers, { loc_name: 'Hall', loc_link: 'hall', loc_is_published: 'true' });
      expect(made.statusCode).toBe(200);
      const id = made.json.data.loc_location_id;
      expect((await get(`/Location/${id}`, bob.headers)).statusCode).toBe(200);
      expect((await put(`/Location/${id}`, bob.headers, { loc_name: 'Mine' })).statusCode).toBe(403);
      expect((await post('/Post', alice.headers, { pst_title: 'x' })).statusCode).toBe(403);
    });

    it('lets a comment author edit their comment and nobody else but staff', async () => {
      const p = await post('/Post', staff.headers, { pst_title: 'Hello', pst_body: 'body', pst_is_published: 'true' });
      expect(p.statusCode).toBe(200);
      const c = await post('/Comment', alice.headers, { cmt_pst_post_id: String(p.json.data.pst_post_id), cmt_body: 'hi' });
      expect(c.statusCode).toBe(200);
      const id = c.json.data.cmt_comment_id;
      expect((await put(`/Comment/${id}`, bob.headers, { cmt_body: 'hijack' })).statusCode).toBe(403);
      expect((await put(`/Comment/${id}`, alice.headers, { cmt_body: 'edited' })).json.data.cmt_body).toBe('edited');
      expect((await get(`/Comment/${id}`, bob.headers)).statusCode).toBe(200);
    });

    it('lets a message recipient read it (single and collection) but not change it', async () => {
      const sent = await post('/Message', alice.headers, { msg_body: 'hi bob', msg_usr_user_id_recipient: String(bob.userId) });
      expect(sent.statusCode).toBe(200);
      expect(sent.json.data.msg_usr_user_id_sender).toBe(alice.userId);
      const id = sent.json.data.msg_message_id;
      expect((await get(`/Message/${id}`, bob.headers)).statusCode).toBe(200);
      const inbox = await get('/Messages', bob.headers);
      expect(inbox.json.num_results).toBe(1);
      expect(inbox.json.data[0].msg_body).toBe('hi bob');
      expect((await put(`/Message/${id}`, bob.headers, { msg_body: 'forged' })).statusCode).toBe(403);
      const carol = await t.keyHeaders({ permission: 4 });
      expect((await get(`/Message/${id}`, carol.headers)).statusCode).toBe(403);
      expect((await get('/Messages', carol.headers)).json.num_results).toBe(0);
    });

    it('keeps a passkey owner-only even against staff, and never exports its credential', async () => {
      const { rows } = await t.services.db
        .insertInto('pky_passkeys' as any)
        .values({ pky_usr_user_id: alice.userId, pky_label: 'Laptop', pky_credential_id: 'cred-1', pky_public_key: 'pk' })
        .returning('pky_passkey_id')
        .execute()
        .then((r) => ({ rows: r as any[] }));
      const id = rows[0].pky_passkey_id;
      const mine = await get(`/Passkey/${id}`, alice.headers);
      expect(mine.statusCode).toBe(200);
      expect(Object.keys(mine.json.data).sort()).toEqual(['pky_create_time', 'pky_delete_time', 'pky_label', 'pky_last_used_time', 'pky_passkey_id', 'pky_prf_capable', 'pky_usr_user_id']);
      expect((await get(`/Passkey/${id}`, staff.headers)).statusCode).toBe(403);
      expect((await get('/Passkeys', staff.headers)).json.num_results).toBe(0);
      expect((await get('/Passkeys', alice.headers)).json.num_results).toBe(1);
      expect((await post('/Passkey', alice.headers, { pky_label: 'x' })).statusCode).toBe(404);
    });
  });

  describe('owner and privilege columns', () => {
    it('stamps the owner from the caller on POST and ignores a supplied one', async () => {
      // SurveyAnswer is written over CRUD by staff only (members answer through the survey action).
      const res = await post('/SurveyAnswer', staff.headers, { sva_qst_question_id: String(await question()), sva_usr_user_id: String(bob.userId), sva_answer: 'yes' });
      expect(res.statusCode).toBe(200);
      expect(res.json.success_message).toBe('New SurveyAnswer successful.');
      expect(res.json.data.sva_usr_user_id).toBe(staff.userId);
    });

    it('never lets PUT change the owner', async () => {
      const res = await post('/SurveyAnswer', staff.headers, { sva_qst_question_id: String(await question()) });
      const id = res.json.data.sva_survey_answer_id;
      const upd = await put(`/SurveyAnswer/${id}`, staff.headers, { sva_usr_user_id: String(bob.userId), sva_answer: 'changed' });
      expect(upd.statusCode).toBe(200);
      expect(upd.json.data.sva_usr_user_id).toBe(staff.userId);
      expect(upd.json.data.sva_answer).toBe('changed');
    });

    it('never lets PUT raise usr_permission or touch other privilege columns, even for the user itself', async () => {
      const upd = await put(`/User/${alice.userId}`, alice.headers, { usr_permission: '10', usr_is_disabled: 'true', usr_email_is_verified: '1', usr_nickname: 'al' });
      expect(upd.statusCode).toBe(200);
      expect(upd.json.data.usr_nickname).toBe('al');
      expect(upd.json.data.usr_permission).toBe(0);
      expect(upd.json.data.usr_is_disabled).toBe(false);
      expect(upd.json.data.usr_email_is_verified).toBe(false);
      const staffTry = await put(`/User/${alice.userId}`, staff.headers, { usr_permission: '10' });
      expect(staffTry.json.data.usr_permission).toBe(0);
    });

    it('never lets staff write a user who outranks them; a superadmin may', async () => {
      const admin = await t.keyHeaders({ permission: 4, userPermission: 10 });
      const email = `boss-${admin.userId}@example.com`;
      await t.services.db.updateTable('usr_users').set({ usr_email: email }).where('usr_user_id', '=', admin.userId).execute();
      const takeover = await put(`/User/${admin.userId}`, staff.headers, { usr_email: 'staff-controlled@example.com' });
      expect(takeover.statusCode).toBe(403);
      expect(takeover.json.errortype).toBe('AuthenticationError');
      expect((await del(`/User/${admin.userId}`, staff.headers)).statusCode).toBe(403);
      const row = await t.services.db.selectFrom('usr_users').select(['usr_email', 'usr_delete_time']).where('usr_user_id', '=', admin.userId).executeTakeFirstOrThrow();
      expect(row).toEqual({ usr_email: email, usr_delete_time: null });
      // Reading stays the default rule, and a peer or higher rank may write.
      expect((await get(`/User/${admin.userId}`, staff.headers)).statusCode).toBe(200);
      const byAdmin = await put(`/User/${staff.userId}`, admin.headers, { usr_nickname: 'staffer' });
      expect(byAdmin.statusCode).toBe(200);
      expect(byAdmin.json.data.usr_nickname).toBe('staffer');
      expect((await put(`/User/${bob.userId}`, alice.headers, { usr_nickname: 'x' })).statusCode).toBe(403);
    });

    it('an email changed over CRUD is no longer verified; other changes keep the verification', async () => {
      const carol = await t.keyHeaders({ permission: 4 });
      const verifiedAt = new Date('2026-01-01T00:00:00Z');
      await t.services.db.updateTable('usr_users').set({ usr_email: `carol-${carol.userId}@example.com`, usr_email_is_verified: true, usr_email_is_verified_time: verifiedAt }).where('usr_user_id', '=', carol.userId).execute();
      const sameAddress = await put(`/User/${carol.userId}`, carol.headers, { usr_email: `CAROL-${carol.userId}@example.com`, usr_nickname: 'c' });
      expect(sameAddress.statusCode).toBe(200);
      expect(sameAddress.json.data).toMatchObject({ usr_email_is_verified: true, usr_email_is_verified_time: '2026-01-01 00:00:00' });
      const moved = await put(`/User/${carol.userId}`, carol.headers, { usr_email: `elsewhere-${carol.userId}@example.com` });
      expect(moved.statusCode).toBe(200);
      expect(moved.json.data).toMatchObject({ usr_email: `elsewhere-${carol.userId}@example.com`, usr_email_is_verified: false, usr_email_is_verified_time: null });
    });

    it('does not export secret-bearing user columns', async () => {
      const res = await get(`/User/${alice.userId}`, alice.headers);
      expect(res.json.success_message).toBe('User found.');
      for (const k of ['usr_password', 'usr_authhash', 'usr_totp_secret', 'usr_totp_hmac_key', 'usr_remember_tokens']) expect(res.json.data).not.toHaveProperty(k);
      expect(res.json.data.usr_email).toBeTypeOf('string');
      expect((await get(`/User/${alice.userId}`, bob.headers)).statusCode).toBe(403);
      expect((await get('/Users', bob.headers)).json.num_results).toBe(1);
    });

    it('drops floored fields silently on write', async () => {
      const upd = await put(`/User/${alice.userId}`, alice.headers, { usr_password: 'x', usr_totp_secret: 'y', usr_last_name: 'Liddell' });
      expect(upd.statusCode).toBe(200);
      const row = await t.services.db.selectFrom('usr_users').select(['usr_password', 'usr_last_name']).where('usr_user_id', '=', alice.userId).executeTakeFirstOrThrow();
      expect(row.usr_last_name).toBe('Liddell');
      expect(row.usr_password).not.toBe('x');
    });

    async function question(): Promise<number> {
      const q = await post('/Question', staff.headers, { qst_question: 'Why?' });
      expect(q.statusCode).toBe(200);
      return q.json.data.qst_question_id;
    }
  });

  describe('validation', () => {
    it.each([
      ['pro_max_cart_count', 'abc'],
      ['pro_max_cart_count', '99999999999'],
      ['pro_is_active', 'yes'],
      ['pro_name', 'x'.repeat(256)],
      ['pro_tier_min_level', '1.5'],
    ])('refuses %s=%s with 400 TransactionError naming the field, writing nothing', async (field, value) => {
      const before = await get('/Products', staff.headers);
      const res = await post('/Product', staff.headers, { pro_name: 'Book', pro_link: 'book', [field]: value });
      expect(res.statusCode).toBe(400);
      expect(res.json.errortype).toBe('TransactionError');
      expect(res.json.error).toContain(field);
      expect((await get('/Products', staff.headers)).json.num_results).toBe(before.json.num_results);
    });

    it('refuses a timestamp outside the contract format, and a missing required field', async () => {
      const bad = await post('/Event', staff.headers, { evt_name: 'E', evt_start_time: '2026-03-01T10:00:00Z' });
      expect(bad.statusCode).toBe(400);
      expect(bad.json.error).toContain('evt_start_time');
      const missing = await post('/Event', staff.headers, { evt_description: 'no name' });
      expect(missing.statusCode).toBe(400);
      expect(missing.json.error).toContain('evt_name');
    });

    it('coerces booleans, integers, timestamps and JSON, and an empty string to null', async () => {
      const res = await post('/Page', staff.headers, { pag_title: 'About', pag_tier_min_level: '2', pag_published_time: '2026-02-03 04:05:06', pag_component_layout: '{"blocks":[1,2]}' });
      expect(res.statusCode).toBe(200);
      expect(res.json.data).toMatchObject({ pag_tier_min_level: 2, pag_published_time: '2026-02-03 04:05:06', pag_component_layout: { blocks: [1, 2] } });
      const upd = await put(`/Page/${res.json.data.pag_page_id}`, staff.headers, { pag_tier_min_level: '' });
      expect(upd.json.data.pag_tier_min_level).toBeNull();
    });

    it('takes and exports dates as YYYY-MM-DD and int8 as numbers', async () => {
      const upd = await put(`/User/${alice.userId}`, alice.headers, { usr_date_of_birth: '1990-02-28' });
      expect(upd.json.data.usr_date_of_birth).toBe('1990-02-28');
      expect(upd.json.data.usr_user_id).toBeTypeOf('number');
      expect((await put(`/User/${alice.userId}`, alice.headers, { usr_date_of_birth: '1990-02-30' })).statusCode).toBe(400);
    });

    it('answers a foreign key to nothing with 400 TransactionError, not 500', async () => {
      const res = await post('/EventSession', staff.headers, { evs_evt_event_id: '987654' });
      expect(res.statusCode).toBe(400);
      expect(res.json.errortype).toBe('TransactionError');
    });
  });

  describe('collections', () => {
    beforeAll(async () => {
      for (const [name, level] of [['c', '3'], ['a', ''], ['b', '1'], ['e', '5'], ['d', '2']] as const) {
        const r = await post('/Video', staff.headers, { vid_title: name, vid_tier_min_level: level });
        expect(r.statusCode).toBe(200);
      }
    });

    it('pages with the defaults: page 0, 3 per page, ascending by primary key, num_results the total', async () => {
      const res = await get('/Videos', bob.headers);
      expect(res.statusCode).toBe(200);
      expect(res.json).toMatchObject({ success_message: '', num_results: 5, page: 0, numperpage: 3 });
      expect(res.json.data.map((v: any) => v.vid_title)).toEqual(['c', 'a', 'b']);
      const p1 = await get('/Videos?page=1', bob.headers);
      expect(p1.json.data.map((v: any) => v.vid_title)).toEqual(['e', 'd']);
    });

    it('sorts by a declared column with or without the prefix, and DESC', async () => {
      const a = await get('/Videos?sort=vid_title&numperpage=10', bob.headers);
      const b = await get('/Videos?sort=title&numperpage=10', bob.headers);
      expect(a.json.data.map((v: any) => v.vid_title)).toEqual(['a', 'b', 'c', 'd', 'e']);
      expect(b.json.data).toEqual(a.json.data);
      const d = await get('/Videos?sort=title&sdirection=DESC&numperpage=2', bob.headers);
      expect(d.json.data.map((v: any) => v.vid_title)).toEqual(['e', 'd']);
      const other = await get('/Videos?sort=title&sdirection=sideways&numperpage=2', bob.headers);
      expect(other.json.data.map((v: any) => v.vid_title)).toEqual(['a', 'b']);
    });

    it.each(['desc', 'Desc', ' DESC', 'DESC '])('reads sdirection=%j as ASC: only exactly DESC sorts descending', async (direction) => {
      const res = await get(`/Videos?sort=title&sdirection=${encodeURIComponent(direction)}&numperpage=2`, bob.headers);
      expect(res.statusCode).toBe(200);
      expect(res.json.data.map((v: any) => v.vid_title)).toEqual(['a', 'b']);
    });

    it.each(['nope', 'vid_title desc', 'vid_title; drop table vid_videos', '1', 'lower(vid_title)', 'pst_title', 'VID_TITLE'])('refuses sort=%s with 400 TransactionError', async (sort) => {
      const res = await get(`/Videos?sort=${encodeURIComponent(sort)}`, bob.headers);
      expect(res.statusCode).toBe(400);
      expect(res.json.errortype).toBe('TransactionError');
    });

    it.each(['usr_password', 'password', 'authhash', 'totp_secret'])('refuses sort=%s on an unreadable column', async (sort) => {
      const res = await get(`/Users?sort=${sort}`, staff.headers);
      expect(res.statusCode).toBe(400);
      expect(res.json.errortype).toBe('TransactionError');
    });

    it('hides rows gated above max_visible_tier_level', async () => {
      const res = await get('/Videos?sort=title&numperpage=10', bob.headers);
      expect(res.json.num_results).toBe(5);
      const posts = await post('/Post', staff.headers, { pst_title: 'gated', pst_tier_min_level: '4', pst_is_published: 'true' });
      await post('/Post', staff.headers, { pst_title: 'open', pst_is_published: 'true' });
      const lvl = await get('/Posts?max_visible_tier_level=3&numperpage=100', bob.headers);
      const titles = lvl.json.data.map((p: any) => p.pst_title);
      expect(titles).toContain('open');
      expect(titles).not.toContain('gated');
      expect(lvl.json.num_results).toBe(lvl.json.data.length);
      const all = await get('/Posts?max_visible_tier_level=4&numperpage=100', bob.headers);
      expect(all.json.data.map((p: any) => p.pst_title)).toContain('gated');
      expect(posts.statusCode).toBe(200);
      expect((await get('/Posts?max_visible_tier_level=high', bob.headers)).statusCode).toBe(400);
    });

    it.each([
      ['Event', 'evt', 'evt_event_id', { evt_name: 'n' }],
      ['Product', 'pro', 'pro_product_id', { pro_name: 'n', pro_link: 'l' }],
      ['Post', 'pst', 'pst_post_id', { pst_title: 'n', pst_is_published: 'true' }],
    ] as const)('%s collections take max_visible_tier_level as a declared filter, counted in num_results', async (cls, prefix, pk, required) => {
      const made: Record<string, number> = {};
      for (const [label, level] of [['free', ''], ['one', '1'], ['three', '3']] as const) {
        const r = await post(`/${cls}`, staff.headers, { ...required, [`${prefix}_tier_min_level`]: level });
        expect(r.statusCode, r.body).toBe(200);
        made[label] = r.json.data[pk];
      }
      const ids = async (query: string) => {
        const res = await get(`/${cls}s?numperpage=1000${query}`, bob.headers);
        expect(res.statusCode).toBe(200);
        const got = res.json.data.map((r: any) => r[pk]);
        expect(res.json.num_results).toBe(got.length);
        return got;
      };
      const at1 = await ids('&max_visible_tier_level=1');
      expect(at1).toEqual(expect.arrayContaining([made.free, made.one]));
      expect(at1).not.toContain(made.three);
      const at0 = await ids('&max_visible_tier_level=0');
      expect(at0).toContain(made.free);
      expect(at0).not.toContain(made.one);
      expect(await ids('')).toEqual(expect.arrayContaining([made.free, made.one, made.three]));
      for (const bad of ['high', '1.5', '1;drop']) expect((await get(`/${cls}s?max_visible_tier_level=${encodeURIComponent(bad)}`, bob.headers)).statusCode).toBe(400);
    });

    it('owner-filters non-staff callers so num_results counts only their rows, counted over every page', async () => {
      const carol = await t.keyHeaders({ permission: 4 });
      const dave = await t.keyHeaders({ permission: 4 });
      const q = await post('/Question', staff.headers, { qst_question: 'Q' });
      const qid = String(q.json.data.qst_question_id);
      // Members answer through the survey action, not CRUD: their rows are written straight to the table.
      const answer = (userId: number, text: string) =>
        t.services.db.insertInto('sva_survey_answers' as any).values({ sva_qst_question_id: Number(qid), sva_usr_user_id: userId, sva_answer: text }).execute();
      for (let i = 0; i < 7; i++) await answer(carol.userId, `c${i}`);
      for (let i = 0; i < 2; i++) await answer(dave.userId, `d${i}`);
      const mine = await get('/SurveyAnswers?numperpage=3&page=2', carol.headers);
      expect(mine.json).toMatchObject({ num_results: 7, page: 2, numperpage: 3 });
      expect(mine.json.data.map((a: any) => a.sva_answer)).toEqual(['c6']);
      const past = await get('/SurveyAnswers?numperpage=3&page=5', carol.headers);
      expect(past.json).toMatchObject({ num_results: 7, page: 5, numperpage: 3, data: [] });
      expect((await get('/SurveyAnswers', dave.headers)).json.num_results).toBe(2);
      expect((await get('/SurveyAnswers', staff.headers)).json.num_results).toBeGreaterThanOrEqual(9);
    });

    it('clamps numperpage to 1000 and refuses nonsense paging', async () => {
      expect((await get('/Videos?numperpage=5000', bob.headers)).json.numperpage).toBe(1000);
      expect((await get('/Videos?numperpage=0', bob.headers)).statusCode).toBe(400);
      expect((await get('/Videos?page=-1', bob.headers)).statusCode).toBe(400);
    });
  });

  describe('capabilities', () => {
    it('checks the key capability before the record: read-only keys cannot write, write-only keys cannot read', async () => {
      const reader = await t.keyHeaders({ permission: 1, userPermission: 5 });
      const writer = await t.keyHeaders({ permission: 2, userPermission: 5 });
      const w = await post('/Location', reader.headers, { loc_name: 'n', loc_link: 'l' });
      expect(w.statusCode).toBe(403);
      expect(w.json.errortype).toBe('AuthenticationError');
      expect((await get('/Locations', writer.headers)).statusCode).toBe(403);
      const made = await post('/Location', writer.headers, { loc_name: 'n', loc_link: 'l' });
      expect(made.statusCode).toBe(200);
      const three = await t.keyHeaders({ permission: 3, userPermission: 5 });
      expect((await del(`/Location/${made.json.data.loc_location_id}`, three.headers)).statusCode).toBe(403);
    });
  });

  describe('plugins', () => {
    it('serves a plugin model only while its plugin is active, and 404s it indistinguishably otherwise', async () => {
      await t.services.plugins.setActive('bookings', false);
      const inactive = await get('/BookingResources', staff.headers);
      const unknown = await get('/NoSuchThings', staff.headers);
      expect(inactive.statusCode).toBe(404);
      expect(inactive.json.errortype).toBe('NotFound');
      expect(unknown.statusCode).toBe(404);
      expect(inactive.json.error.replace('BookingResources', 'X')).toBe(unknown.json.error.replace('NoSuchThings', 'X'));
      expect((await post('/BookingResource', staff.headers, { bkr_name: 'Room' })).statusCode).toBe(404);

      await t.services.plugins.setActive('bookings', true);
      const made = await post('/BookingResource', staff.headers, { bkr_name: 'Room', bkr_slot_minutes: '30', bkr_weekly_availability: '{"mon":[["09:00","17:00"]]}' });
      expect(made.statusCode).toBe(200);
      expect(made.json.data.bkr_weekly_availability).toEqual({ mon: [['09:00', '17:00']] });
      const rid = String(made.json.data.bkr_booking_resource_id);
      const slot = { bkg_bkr_booking_resource_id: rid, bkg_start_time: '2026-03-02 09:00:00', bkg_end_time: '2026-03-02 09:30:00' };
      // Members book through the booking action; over CRUD only staff write bookings.
      expect((await post('/Booking', alice.headers, slot)).statusCode).toBe(404);
      const booked = await post('/Booking', staff.headers, slot);
      expect(booked.statusCode).toBe(200);
      expect(booked.json.data.bkg_usr_user_id).toBe(staff.userId);
      const twice = await post('/Booking', staff.headers, slot);
      expect(twice.statusCode).toBe(400);
      expect(twice.json.errortype).toBe('TransactionError');
      expect((await get(`/Booking/${booked.json.data.bkg_booking_id}`, bob.headers)).statusCode).toBe(403);

      await t.services.plugins.setActive('bookings', false);
      expect((await get(`/Booking/${booked.json.data.bkg_booking_id}`, alice.headers)).statusCode).toBe(404);
    });
  });
});
