import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workflowTables } from '../../src/events/tables.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { onPostgres } from '../helpers/database.js';
import { createEvent, createEventProduct, createSession, liveRegistrations, liveWaitingList } from '../helpers/events.js';
import { createTier } from '../helpers/tiers.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

const post = (name: string, payload: Record<string, unknown>, headers: Record<string, string>) =>
  t.request({ method: 'POST', url: `/api/v1/action/${name}`, payload, headers });
const member = async () => (await t.keyHeaders()).headers;
const memberWithId = async () => {
  const k = await t.keyHeaders();
  return { headers: k.headers, userId: k.userId };
};

/** A 422 business refusal: ActionError with a message to show. */
function expectRefusal(res: { statusCode: number; json: any }, message: RegExp) {
  expect(res.statusCode).toBe(422);
  expect(res.json.errortype).toBe('ActionError');
  expect(res.json.error).toMatch(message);
  expect(res.json.validation_errors).toBeUndefined();
}

async function register(eventId: number, headers: Record<string, string>): Promise<number> {
  const res = await post('event_register', { evt_event_id: eventId }, headers);
  expect(res.statusCode).toBe(200);
  return res.json.data.event_registrant_id;
}

describe('event_register', () => {
  it('registers the acting user for a free event that accepts signups', async () => {
    const eventId = await createEvent(t, { evt_name: 'Open day', evt_max_signups: 10 });
    const { headers, userId } = await memberWithId();
    const res = await post('event_register', { evt_event_id: eventId }, headers);
    expect(res.statusCode).toBe(200);
    expect(res.json).toEqual({
      api_version: '1.0',
      success_message: 'You are registered for Open day.',
      data: { event_registrant_id: expect.any(Number), event_id: eventId, event_name: 'Open day', registered_time: '2026-03-01 12:00:00' },
    });
    expect(await liveRegistrations(t, eventId)).toEqual([{ evr_event_registrant_id: res.json.data.event_registrant_id, evr_usr_user_id: userId }]);
  });

  it('422 ValidationError without an event id, and nothing is written', async () => {
    const res = await post('event_register', {}, await member());
    expect(res.statusCode).toBe(422);
    expect(res.json.errortype).toBe('ValidationError');
    expect(res.json.validation_errors).toEqual({ evt_event_id: 'is required' });
  });

  it('refuses an event that is not accepting signups, or no longer active, or over', async () => {
    const closed = await createEvent(t, { evt_name: 'Closed', evt_is_accepting_signups: false });
    expectRefusal(await post('event_register', { evt_event_id: closed }, await member()), /Closed is not accepting registrations/);
    const cancelled = await createEvent(t, { evt_name: 'Cancelled', evt_status: 3 });
    expectRefusal(await post('event_register', { evt_event_id: cancelled }, await member()), /Cancelled is no longer open/);
    const over = await createEvent(t, { evt_name: 'Over', evt_end_time: new Date('2026-03-01T11:59:59Z') });
    expectRefusal(await post('event_register', { evt_event_id: over }, await member()), /Over has already ended/);
    for (const id of [closed, cancelled, over]) expect(await liveRegistrations(t, id)).toEqual([]);
  });

  it('refuses a full event, pointing at the waiting list when it has one', async () => {
    const full = await createEvent(t, { evt_name: 'Tiny', evt_max_signups: 1 });
    await register(full, await member());
    expectRefusal(await post('event_register', { evt_event_id: full }, await member()), /^Tiny is full$/);
    const listed = await createEvent(t, { evt_name: 'Listed', evt_max_signups: 1, evt_allow_waiting_list: true });
    await register(listed, await member());
    const res = await post('event_register', { evt_event_id: listed }, await member());
    expectRefusal(res, /Listed is full; you may join its waiting list/);
    expect(res.json.data).toEqual({ waiting_list: true });
    expect(await liveRegistrations(t, full)).toHaveLength(1);
  });

  it('refuses a second registration of the same user', async () => {
    const eventId = await createEvent(t, { evt_name: 'Twice' });
    const headers = await member();
    await register(eventId, headers);
    expectRefusal(await post('event_register', { evt_event_id: eventId }, headers), /already registered for Twice/);
    expect(await liveRegistrations(t, eventId)).toHaveLength(1);
  });

  it('answers a deleted, unknown or private event alike; staff may join a private one', async () => {
    const deleted = await createEvent(t, { evt_delete_time: new Date('2026-02-01T00:00:00Z') });
    const privateEvent = await createEvent(t, { evt_visibility: 0 });
    const headers = await member();
    for (const id of [deleted, privateEvent, 999_999]) {
      const res = await post('event_register', { evt_event_id: id }, headers);
      expectRefusal(res, /^That event is not available$/);
    }
    expect(await liveRegistrations(t, privateEvent)).toEqual([]);
    await register(privateEvent, (await t.staffHeaders()).headers);
  });

  it('refuses an event gated above the user tier, and admits a member of a tier that meets it', async () => {
    const gold = await createTier(t, { level: 20 });
    const gated = await createEvent(t, { evt_name: 'Members night', evt_tier_min_level: 20 });
    expectRefusal(await post('event_register', { evt_event_id: gated }, await member()), /^That event is not available$/);
    const { headers, userId } = await memberWithId();
    await t.services.tiers.membership.assignManually(userId, gold.tierId, null);
    await register(gated, headers);
    expect((await liveRegistrations(t, gated)).map((r) => r.evr_usr_user_id)).toEqual([userId]);
  });

  it('sends a paid event to the store, naming its product', async () => {
    const paid = await createEvent(t, { evt_name: 'Gala' });
    const productId = await createEventProduct(t, paid, 'Gala ticket');
    const res = await post('event_register', { evt_event_id: paid }, await member());
    expectRefusal(res, /Gala is a paid event: buy "Gala ticket" through the store/);
    expect(res.json.data).toEqual({ product_id: productId, product_name: 'Gala ticket' });
    expect(await liveRegistrations(t, paid)).toEqual([]);
  });

  it('replays a retry with the same Idempotency-Key instead of registering again', async () => {
    const eventId = await createEvent(t, { evt_name: 'Retry' });
    const headers = { ...(await member()), 'idempotency-key': 'register-retry-1' };
    const first = await post('event_register', { evt_event_id: eventId }, headers);
    const retry = await post('event_register', { evt_event_id: eventId }, headers);
    expect(first.statusCode).toBe(200);
    expect(retry.statusCode).toBe(200);
    expect(retry.headers['idempotency-replayed']).toBe('true');
    expect(retry.json).toEqual(first.json);
    expect(await liveRegistrations(t, eventId)).toHaveLength(1);
  });

  it.skipIf(!onPostgres)('never exceeds evt_max_signups under 20 concurrent registrations (PostgreSQL; PGlite has one connection, so requests cannot overlap there)', async () => {
    const eventId = await createEvent(t, { evt_name: 'Rush', evt_max_signups: 5 });
    const users = await Promise.all(Array.from({ length: 20 }, () => member()));
    const results = await Promise.all(users.map((headers) => post('event_register', { evt_event_id: eventId }, headers)));
    const statuses = results.map((r) => r.statusCode).sort();
    expect(statuses.filter((s) => s === 200)).toHaveLength(5);
    expect(statuses.filter((s) => s === 422)).toHaveLength(15);
    for (const r of results.filter((x) => x.statusCode === 422)) expect(r.json.error).toBe('Rush is full');
    expect(await liveRegistrations(t, eventId)).toHaveLength(5);
  });

  it.skipIf(!onPostgres)('registers one user once under 20 concurrent requests of that user (PostgreSQL only, as above)', async () => {
    const eventId = await createEvent(t, { evt_name: 'Eager' });
    const headers = await member();
    const results = await Promise.all(Array.from({ length: 20 }, () => post('event_register', { evt_event_id: eventId }, headers)));
    expect(results.filter((r) => r.statusCode === 200)).toHaveLength(1);
    for (const r of results.filter((x) => x.statusCode !== 200)) expectRefusal(r, /already registered for Eager/);
    expect(await liveRegistrations(t, eventId)).toHaveLength(1);
  });
});

describe('event_withdraw', () => {
  it('publishes the contract input schema', async () => {
    const res = await t.request({ method: 'GET', url: '/api/v1/actions' });
    expect(res.json.data.event_withdraw).toEqual({
      description: 'Withdraw a registration from an event',
      requires_session: true,
      input: { evr_event_registrant_id: { type: 'int', required: true }, confirm: { type: 'bool', required: true } },
      has_form: true,
    });
  });

  it('422 ValidationError naming both fields when both are missing or ill-typed', async () => {
    const headers = await member();
    for (const body of [{}, { evr_event_registrant_id: 'x', confirm: 'maybe' }]) {
      const res = await post('event_withdraw', body, headers);
      expect(res.statusCode).toBe(422);
      expect(res.json.errortype).toBe('ValidationError');
      expect(Object.keys(res.json.validation_errors).sort()).toEqual(['confirm', 'evr_event_registrant_id']);
    }
  });

  it('refuses confirm false and keeps the registration', async () => {
    const eventId = await createEvent(t);
    const headers = await member();
    const id = await register(eventId, headers);
    const res = await post('event_withdraw', { evr_event_registrant_id: id, confirm: false }, headers);
    expect(res.statusCode).toBe(422);
    expect(res.json.errortype).toBe('ValidationError');
    expect(res.json.validation_errors).toEqual({ confirm: 'must be true to withdraw' });
    expect(await liveRegistrations(t, eventId)).toHaveLength(1);
  });

  it('soft-deletes the registrant own registration; a second withdrawal is refused', async () => {
    const eventId = await createEvent(t, { evt_name: 'Talk' });
    const headers = await member();
    const id = await register(eventId, headers);
    const res = await post('event_withdraw', { evr_event_registrant_id: id, confirm: true }, headers);
    expect(res.statusCode).toBe(200);
    expect(res.json.success_message).toBe('The registration for Talk is withdrawn.');
    expect(res.json.data).toEqual({ event_registrant_id: id, event_id: eventId, withdrawn: true, promoted_user_id: null });
    const row = await workflowTables(t.services.db).selectFrom('evr_event_registrants').selectAll().where('evr_event_registrant_id', '=', id).executeTakeFirstOrThrow();
    expect(row.evr_delete_time).toEqual(new Date('2026-03-01T12:00:00Z'));
    expectRefusal(await post('event_withdraw', { evr_event_registrant_id: id, confirm: true }, headers), /No such registration of yours/);
    // Withdrawn, the user may register again.
    await register(eventId, headers);
  });

  it('refuses another member, answering as for a missing registration; staff may withdraw anyone', async () => {
    const eventId = await createEvent(t);
    const id = await register(eventId, await member());
    expectRefusal(await post('event_withdraw', { evr_event_registrant_id: id, confirm: true }, await member()), /^No such registration of yours$/);
    expectRefusal(await post('event_withdraw', { evr_event_registrant_id: 999_999, confirm: true }, await member()), /^No such registration of yours$/);
    expect(await liveRegistrations(t, eventId)).toHaveLength(1);
    const res = await post('event_withdraw', { evr_event_registrant_id: id, confirm: true }, (await t.staffHeaders()).headers);
    expect(res.statusCode).toBe(200);
    expect(await liveRegistrations(t, eventId)).toEqual([]);
  });

  it('promotes the first person on the waiting list into the freed place, and tells them by mail', async () => {
    const eventId = await createEvent(t, { evt_name: 'Workshop', evt_max_signups: 1, evt_allow_waiting_list: true });
    const first = await memberWithId();
    const id = await register(eventId, first.headers);
    const second = await memberWithId();
    const third = await memberWithId();
    expect((await post('event_waiting_list', { evt_event_id: eventId }, second.headers)).statusCode).toBe(200);
    t.clock.advanceSeconds(60);
    expect((await post('event_waiting_list', { evt_event_id: eventId }, third.headers)).statusCode).toBe(200);

    const res = await post('event_withdraw', { evr_event_registrant_id: id, confirm: true }, first.headers);
    expect(res.statusCode).toBe(200);
    expect(res.json.data.promoted_user_id).toBe(second.userId);
    expect((await liveRegistrations(t, eventId)).map((r) => r.evr_usr_user_id)).toEqual([second.userId]);
    expect((await liveWaitingList(t, eventId)).map((r) => r.ewl_usr_user_id)).toEqual([third.userId]);
    const email = (await t.services.db.selectFrom('usr_users').select('usr_email').where('usr_user_id', '=', second.userId).executeTakeFirstOrThrow()).usr_email;
    const mail = await t.services.db.selectFrom('mob_mail_outbox').selectAll().where('mob_to', '=', email).execute();
    expect(mail.map((m) => [m.mob_template, m.mob_subject])).toEqual([['event_waiting_list_promoted', 'You have a place at Workshop']]);
  });

  it('promotes nobody on a paid event: its places are bought through the store', async () => {
    const eventId = await createEvent(t, { evt_max_signups: 1, evt_allow_waiting_list: true });
    const first = await memberWithId();
    const id = await register(eventId, first.headers);
    const waiting = await memberWithId();
    expect((await post('event_waiting_list', { evt_event_id: eventId }, waiting.headers)).statusCode).toBe(200);
    await createEventProduct(t, eventId, 'Seat');
    const res = await post('event_withdraw', { evr_event_registrant_id: id, confirm: true }, first.headers);
    expect(res.json.data.promoted_user_id).toBeNull();
    expect(await liveRegistrations(t, eventId)).toEqual([]);
    expect((await liveWaitingList(t, eventId)).map((r) => r.ewl_usr_user_id)).toEqual([waiting.userId]);
  });
});

describe('event_waiting_list', () => {
  it('joins the list of a full event that keeps one, in order', async () => {
    const eventId = await createEvent(t, { evt_name: 'Popular', evt_max_signups: 1, evt_allow_waiting_list: true });
    await register(eventId, await member());
    const a = await post('event_waiting_list', { evt_event_id: eventId }, await member());
    expect(a.statusCode).toBe(200);
    expect(a.json).toMatchObject({ success_message: 'You are on the waiting list for Popular.', data: { event_id: eventId, position: 1, joined_time: expect.any(String) } });
    const b = await post('event_waiting_list', { evt_event_id: eventId }, await member());
    expect(b.json.data.position).toBe(2);
  });

  it('once only', async () => {
    const eventId = await createEvent(t, { evt_name: 'Once', evt_max_signups: 1, evt_allow_waiting_list: true });
    await register(eventId, await member());
    const headers = await member();
    expect((await post('event_waiting_list', { evt_event_id: eventId }, headers)).statusCode).toBe(200);
    expectRefusal(await post('event_waiting_list', { evt_event_id: eventId }, headers), /already on the waiting list for Once/);
    expect(await liveWaitingList(t, eventId)).toHaveLength(1);
  });

  it('closes the user entry when they take a place directly', async () => {
    const eventId = await createEvent(t, { evt_max_signups: 1, evt_allow_waiting_list: true });
    await register(eventId, await member());
    const waiting = await memberWithId();
    expect((await post('event_waiting_list', { evt_event_id: eventId }, waiting.headers)).statusCode).toBe(200);
    await workflowTables(t.services.db).updateTable('evt_events').set({ evt_max_signups: 2 }).where('evt_event_id', '=', eventId).execute();
    await register(eventId, waiting.headers);
    expect(await liveWaitingList(t, eventId)).toEqual([]);
  });

  it('refuses an event without a waiting list, one with places left, and a registered user', async () => {
    const noList = await createEvent(t, { evt_name: 'NoList', evt_max_signups: 1 });
    await register(noList, await member());
    expectRefusal(await post('event_waiting_list', { evt_event_id: noList }, await member()), /NoList has no waiting list/);
    const roomy = await createEvent(t, { evt_name: 'Roomy', evt_max_signups: 5, evt_allow_waiting_list: true });
    expectRefusal(await post('event_waiting_list', { evt_event_id: roomy }, await member()), /Roomy still has places: register instead/);
    const full = await createEvent(t, { evt_name: 'Mine', evt_max_signups: 1, evt_allow_waiting_list: true });
    const headers = await member();
    await register(full, headers);
    expectRefusal(await post('event_waiting_list', { evt_event_id: full }, headers), /already registered for Mine/);
    expectRefusal(await post('event_waiting_list', { evt_event_id: 999_999 }, headers), /^That event is not available$/);
    for (const id of [noList, roomy, full]) expect(await liveWaitingList(t, id)).toEqual([]);
  });
});

describe('event_sessions and event_sessions_course', () => {
  it('chooses sessions of the registration event; a new choice replaces the old', async () => {
    const eventId = await createEvent(t, { evt_name: 'Series' });
    const [s1, s2, s3] = [await createSession(t, eventId, 1), await createSession(t, eventId, 2), await createSession(t, eventId, 3)];
    const headers = await member();
    const reg = await register(eventId, headers);
    const res = await post('event_sessions', { evr_event_registrant_id: reg, evs_event_session_ids: [s3, s1] }, headers);
    expect(res.statusCode).toBe(200);
    expect(res.json).toMatchObject({ success_message: 'Your sessions of Series are saved.', data: { event_registrant_id: reg, event_id: eventId, session_ids: [s1, s3] } });
    const again = await post('event_sessions', { evr_event_registrant_id: reg, evs_event_session_ids: [s2] }, headers);
    expect(again.json.data.session_ids).toEqual([s2]);
  });

  it('refuses sessions of another event or deleted ones, an empty choice, and a course event', async () => {
    const eventId = await createEvent(t, { evt_name: 'Main' });
    const mine = await createSession(t, eventId, 1);
    const gone = await createSession(t, eventId, 2, { evs_delete_time: new Date('2026-02-01T00:00:00Z') });
    const otherSession = await createSession(t, await createEvent(t), 1);
    const headers = await member();
    const reg = await register(eventId, headers);
    const res = await post('event_sessions', { evr_event_registrant_id: reg, evs_event_session_ids: [mine, otherSession, gone] }, headers);
    expect(res.statusCode).toBe(422);
    expect(res.json.errortype).toBe('ValidationError');
    expect(res.json.validation_errors).toEqual({ evs_event_session_ids: `${otherSession}, ${gone} are not sessions of Main` });
    const empty = await post('event_sessions', { evr_event_registrant_id: reg, evs_event_session_ids: [] }, headers);
    expect(empty.json.validation_errors).toEqual({ evs_event_session_ids: 'must have at least 1 items' });

    const course = await createEvent(t, { evt_name: 'Course', evt_session_display_type: 2 });
    const cs = await createSession(t, course, 1);
    const creg = await register(course, headers);
    expectRefusal(await post('event_sessions', { evr_event_registrant_id: creg, evs_event_session_ids: [cs] }, headers), /Course is a course/);
    const bare = await createEvent(t, { evt_name: 'Bare' });
    const breg = await register(bare, headers);
    expectRefusal(await post('event_sessions', { evr_event_registrant_id: breg, evs_event_session_ids: [mine] }, headers), /Bare has no sessions to choose/);
  });

  it('refuses another member registration', async () => {
    const eventId = await createEvent(t);
    const s = await createSession(t, eventId, 1);
    const reg = await register(eventId, await member());
    expectRefusal(await post('event_sessions', { evr_event_registrant_id: reg, evs_event_session_ids: [s] }, await member()), /^No such registration of yours$/);
    expectRefusal(await post('event_sessions_course', { evr_event_registrant_id: reg }, await member()), /^No such registration of yours$/);
  });

  it('takes every live session of a course event; refuses an event that is not a course', async () => {
    const course = await createEvent(t, { evt_name: 'Pottery', evt_session_display_type: 2 });
    const ids = [await createSession(t, course, 2), await createSession(t, course, 1)];
    await createSession(t, course, 3, { evs_delete_time: new Date('2026-02-01T00:00:00Z') });
    const headers = await member();
    const reg = await register(course, headers);
    const res = await post('event_sessions_course', { evr_event_registrant_id: reg }, headers);
    expect(res.statusCode).toBe(200);
    expect(res.json).toMatchObject({ success_message: 'You are enrolled in every session of Pottery.', data: { session_ids: [ids[1], ids[0]] } });
    const plain = await createEvent(t, { evt_name: 'Plain' });
    await createSession(t, plain, 1);
    const preg = await register(plain, headers);
    expectRefusal(await post('event_sessions_course', { evr_event_registrant_id: preg }, headers), /Plain is not a course/);
    expect((await post('event_sessions_course', {}, headers)).json.validation_errors).toEqual({ evr_event_registrant_id: 'is required' });
  });
});

describe('event forms', () => {
  it('serves event_sessions for the user registration, with the chosen sessions checked', async () => {
    const eventId = await createEvent(t, { evt_name: 'Fest' });
    const [a, b] = [await createSession(t, eventId, 1), await createSession(t, eventId, 2)];
    const headers = await member();
    const reg = await register(eventId, headers);
    expect((await post('event_sessions', { evr_event_registrant_id: reg, evs_event_session_ids: [b] }, headers)).statusCode).toBe(200);
    const res = await t.request({ method: 'GET', url: `/api/v1/form/event_sessions?evr_event_registrant_id=${reg}`, headers });
    expect(res.statusCode).toBe(200);
    expect(res.json.data.fields).toEqual([
      { type: 'hidden', name: 'evr_event_registrant_id', label: '', value: reg },
      {
        type: 'checkbox_list',
        name: 'evs_event_session_ids',
        label: 'Sessions of Fest',
        value: [String(b)],
        required: true,
        options: [{ value: String(a), label: 'Session 1' }, { value: String(b), label: 'Session 2' }],
      },
    ]);
    const actions = await t.request({ method: 'GET', url: '/api/v1/actions' });
    expect(res.json.data.fields.map((f: { name: string }) => f.name)).toEqual(Object.keys(actions.json.data.event_sessions.input));
    const other = await t.request({ method: 'GET', url: `/api/v1/form/event_sessions?evr_event_registrant_id=${reg}`, headers: await member() });
    expectRefusal(other, /^No such registration of yours$/);
    const course = await t.request({ method: 'GET', url: `/api/v1/form/event_sessions_course?evr_event_registrant_id=${reg}`, headers });
    expect(course.json.data.fields).toEqual([{ type: 'hidden', name: 'evr_event_registrant_id', label: '', value: reg }]);
  });

  it('serves event_register for one event as its input field', async () => {
    const eventId = await createEvent(t, { evt_name: 'Formal' });
    const res = await t.request({ method: 'GET', url: `/api/v1/form/event_register?evt_event_id=${eventId}`, headers: await member() });
    expect(res.statusCode).toBe(200);
    expect(res.json.data).toEqual({
      schema_version: 1,
      form: { name: 'event_register', submit_to: '/api/v1/action/event_register', submit_label: 'Register for Formal' },
      fields: [{ type: 'hidden', name: 'evt_event_id', label: '', value: eventId }],
    });
    const hidden = await createEvent(t, { evt_visibility: 0 });
    const refused = await t.request({ method: 'GET', url: `/api/v1/form/event_register?evt_event_id=${hidden}`, headers: await member() });
    expectRefusal(refused, /^That event is not available$/);
  });

  it('without an event, offers the open events the user may see', async () => {
    const open = await createEvent(t, { evt_name: 'Offered' });
    const closed = await createEvent(t, { evt_name: 'NotOffered', evt_is_accepting_signups: false });
    const hidden = await createEvent(t, { evt_name: 'Hidden', evt_visibility: 0 });
    const res = await t.request({ method: 'GET', url: '/api/v1/form/event_register', headers: await member() });
    expect(res.statusCode).toBe(200);
    const [f] = res.json.data.fields;
    expect(f).toMatchObject({ type: 'drop', name: 'evt_event_id', required: true });
    const offered = f.options.map((o: { value: string }) => o.value);
    expect(offered).toContain(String(open));
    expect(offered).not.toContain(String(closed));
    expect(offered).not.toContain(String(hidden));
    // Every field name is an input of the action.
    const actions = await t.request({ method: 'GET', url: '/api/v1/actions' });
    expect(Object.keys(actions.json.data.event_register.input)).toEqual(['evt_event_id']);
  });
});
