import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workflowTables } from '../../src/events/tables.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { onPostgres } from '../helpers/database.js';

// The clock starts on Sunday 2026-03-01 12:00 UTC; 2026-03-02 is a Monday.
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

const post = (payload: Record<string, unknown>, headers: Record<string, string>) => t.request({ method: 'POST', url: '/api/v1/action/booking', payload, headers });
const w = () => workflowTables(t.services.db);

async function resource(name = 'Studio', o: { deleted?: boolean } = {}): Promise<number> {
  const row = await w()
    .insertInto('bkr_booking_resources')
    .values({
      bkr_name: name,
      bkr_slot_minutes: 30,
      bkr_weekly_availability: JSON.stringify({ mon: [['09:00', '12:00'], ['13:00', '17:00']], fri: [['10:00', '11:00']] }),
      ...(o.deleted ? { bkr_delete_time: new Date('2026-02-01T00:00:00Z') } : {}),
    })
    .returning('bkr_booking_resource_id')
    .executeTakeFirstOrThrow();
  return row.bkr_booking_resource_id;
}

const bookingsOf = (resourceId: number) =>
  w().selectFrom('bkg_bookings').select(['bkg_usr_user_id', 'bkg_start_time', 'bkg_end_time']).where('bkg_bkr_booking_resource_id', '=', resourceId).where('bkg_delete_time', 'is', null).execute();

function expectRefusal(res: { statusCode: number; json: any }, message: RegExp) {
  expect(res.statusCode).toBe(422);
  expect(res.json.errortype).toBe('ActionError');
  expect(res.json.error).toMatch(message);
}

describe('booking while the bookings plugin is inactive', () => {
  it('is the same 404 as an unknown action, absent from discovery, and its models are not CRUD resources', async () => {
    const { headers } = await t.keyHeaders();
    const res = await post({ bkr_booking_resource_id: 1, start_time: '2026-03-02 09:00:00' }, headers);
    const unknown = await t.request({ method: 'POST', url: '/api/v1/action/no_such_action', payload: {}, headers });
    expect(res.statusCode).toBe(404);
    expect(res.json.errortype).toBe('ActionError');
    expect(res.json.error.replace('booking', 'X')).toBe(unknown.json.error.replace('no_such_action', 'X'));
    expect((await t.request({ method: 'GET', url: '/api/v1/actions' })).json.data.booking).toBeUndefined();
    const staff = await t.staffHeaders();
    expect((await t.request({ method: 'GET', url: '/api/v1/BookingResources', headers: staff.headers })).statusCode).toBe(404);
    expect((await t.request({ method: 'POST', url: '/api/v1/Booking', headers: staff.headers, payload: {} })).statusCode).toBe(404);
  });
});

describe('booking', () => {
  beforeAll(async () => {
    await t.services.plugins.setActive('bookings', true);
  });

  it('is published with its input schema while the plugin is active', async () => {
    const res = await t.request({ method: 'GET', url: '/api/v1/actions' });
    expect(res.json.data.booking).toEqual({
      description: 'Book an appointment slot of a bookable resource',
      requires_session: true,
      input: { bkr_booking_resource_id: { type: 'int', required: true, min: 1 }, start_time: { type: 'datetime', required: true } },
      has_form: false,
    });
  });

  it('books a slot for the acting user, one slot long', async () => {
    const id = await resource('Studio');
    const { headers, userId } = await t.keyHeaders();
    const res = await post({ bkr_booking_resource_id: id, start_time: '2026-03-02 13:30:00' }, headers);
    expect(res.statusCode).toBe(200);
    expect(res.json).toEqual({
      api_version: '1.0',
      success_message: 'Studio is booked for you.',
      data: { booking_id: expect.any(Number), resource_id: id, start_time: '2026-03-02 13:30:00', end_time: '2026-03-02 14:00:00' },
    });
    expect(await bookingsOf(id)).toEqual([{ bkg_usr_user_id: userId, bkg_start_time: new Date('2026-03-02T13:30:00Z'), bkg_end_time: new Date('2026-03-02T14:00:00Z') }]);
    // The booking is the user's over CRUD.
    const mine = await t.request({ method: 'GET', url: `/api/v1/Booking/${res.json.data.booking_id}`, headers });
    expect(mine.statusCode).toBe(200);
  });

  it('refuses a slot already booked, by anyone', async () => {
    const id = await resource('Desk');
    expect((await post({ bkr_booking_resource_id: id, start_time: '2026-03-02 09:00:00' }, (await t.keyHeaders()).headers)).statusCode).toBe(200);
    expectRefusal(await post({ bkr_booking_resource_id: id, start_time: '2026-03-02 09:00:00' }, (await t.keyHeaders()).headers), /That slot of Desk is already booked/);
    expect(await bookingsOf(id)).toHaveLength(1);
    // The next slot is free.
    expect((await post({ bkr_booking_resource_id: id, start_time: '2026-03-02 09:30:00' }, (await t.keyHeaders()).headers)).statusCode).toBe(200);
  });

  it('has the database refuse a second live booking of a slot', async () => {
    const id = await resource();
    const { userId } = await t.keyHeaders();
    const slot = { bkg_bkr_booking_resource_id: id, bkg_usr_user_id: userId, bkg_start_time: new Date('2026-03-06T10:00:00Z'), bkg_end_time: new Date('2026-03-06T10:30:00Z') };
    await w().insertInto('bkg_bookings').values(slot).execute();
    await expect(w().insertInto('bkg_bookings').values(slot).execute()).rejects.toMatchObject({ code: '23505' });
  });

  it('refuses a slot in the past', async () => {
    const id = await resource();
    const { headers } = await t.keyHeaders();
    expectRefusal(await post({ bkr_booking_resource_id: id, start_time: '2026-02-23 09:00:00' }, headers), /^That slot is in the past$/);
    t.clock.set('2026-03-02T09:00:00Z');
    try {
      expectRefusal(await post({ bkr_booking_resource_id: id, start_time: '2026-03-02 09:00:00' }, headers), /^That slot is in the past$/);
    } finally {
      t.clock.set('2026-03-01T12:00:00Z');
    }
    expect(await bookingsOf(id)).toEqual([]);
  });

  it('refuses slots outside the weekly availability: closed day, before opening, over the close, off the slot grid', async () => {
    const id = await resource('Room');
    const { headers } = await t.keyHeaders();
    for (const start of ['2026-03-03 09:00:00', '2026-03-02 08:30:00', '2026-03-02 11:45:00', '2026-03-02 12:00:00', '2026-03-02 09:15:00', '2026-03-06 11:00:00']) {
      expectRefusal(await post({ bkr_booking_resource_id: id, start_time: start }, headers), new RegExp(`^${start} is not a 30-minute slot of Room's availability$`));
    }
    expect(await bookingsOf(id)).toEqual([]);
    expect((await post({ bkr_booking_resource_id: id, start_time: '2026-03-02 16:30:00' }, headers)).statusCode).toBe(200);
  });

  it('refuses an unknown or deleted resource, and validates its input', async () => {
    const gone = await resource('Gone', { deleted: true });
    const { headers } = await t.keyHeaders();
    for (const id of [gone, 999_999]) expectRefusal(await post({ bkr_booking_resource_id: id, start_time: '2026-03-02 09:00:00' }, headers), /^That resource is not available for booking$/);
    const res = await post({ bkr_booking_resource_id: gone, start_time: 'monday' }, headers);
    expect(res.statusCode).toBe(422);
    expect(res.json.errortype).toBe('ValidationError');
    expect(res.json.validation_errors).toEqual({ start_time: 'must be a date and time YYYY-MM-DD HH:MM:SS' });
  });

  it('refuses a malformed weekly availability on CRUD writes of a resource', async () => {
    const staff = await t.staffHeaders();
    const create = (availability: string) =>
      t.request({ method: 'POST', url: '/api/v1/BookingResource', headers: { ...staff.headers, 'content-type': 'application/x-www-form-urlencoded' }, payload: `bkr_name=Lab&bkr_weekly_availability=${encodeURIComponent(availability)}` });
    const bad = await create('{"monday":[["09:00","17:00"]]}');
    expect(bad.statusCode).toBe(400);
    expect(bad.json).toMatchObject({ errortype: 'TransactionError', error: expect.stringMatching(/^Invalid value for bkr_weekly_availability: 'monday' is not a weekday/) });
    const good = await create('{"mon":[["09:00","17:00"]]}');
    expect(good.statusCode).toBe(200);
    const id = good.json.data.bkr_booking_resource_id;
    const put = await t.request({ method: 'PUT', url: `/api/v1/BookingResource/${id}?bkr_weekly_availability=${encodeURIComponent('{"mon":[["17:00","09:00"]]}')}`, headers: staff.headers });
    expect(put.statusCode).toBe(400);
    expect(put.json.error).toMatch(/mon: \["17:00","09:00"\] is not an \["HH:MM", "HH:MM"\] window/);
    const stored = await w().selectFrom('bkr_booking_resources').select('bkr_weekly_availability').where('bkr_booking_resource_id', '=', id).executeTakeFirstOrThrow();
    expect(stored.bkr_weekly_availability).toEqual({ mon: [['09:00', '17:00']] });
  });

  it.skipIf(!onPostgres)('books one slot once under 10 concurrent requests (PostgreSQL; PGlite has one connection)', async () => {
    const id = await resource('Court');
    const users = await Promise.all(Array.from({ length: 10 }, () => t.keyHeaders()));
    const results = await Promise.all(users.map((u) => post({ bkr_booking_resource_id: id, start_time: '2026-03-02 10:00:00' }, u.headers)));
    expect(results.filter((r) => r.statusCode === 200)).toHaveLength(1);
    for (const r of results.filter((x) => x.statusCode !== 200)) expectRefusal(r, /already booked/);
    expect(await bookingsOf(id)).toHaveLength(1);
  });
});
