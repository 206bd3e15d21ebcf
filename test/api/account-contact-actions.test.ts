import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

const post = (name: string, payload: Record<string, unknown>, headers: Record<string, string>) =>
  t.request({ method: 'POST', url: `/api/v1/action/${name}`, payload, headers });
const db = () => t.services.db as unknown as import('kysely').Kysely<any>;

describe('address_edit', () => {
  it('creates the default address when the user has none, then edits it', async () => {
    const { headers, userId } = await t.keyHeaders();
    const created = await post('address_edit', { usa_address1: '1 Main St', usa_city: 'Springfield', usa_zip_code_id: '12345', usa_cco_country_code_id: '1' }, headers);
    expect(created.statusCode).toBe(200);
    expect(created.json).toEqual({
      api_version: '1.0',
      success_message: 'Your address has been saved.',
      data: {
        address: { address_id: expect.any(Number), address1: '1 Main St', address2: null, city: 'Springfield', state: null, zip: '12345', country_code_id: 1, is_default: true },
        created: true,
      },
    });
    const edited = await post('address_edit', { usa_address1: '2 Elm St', usa_city: 'Shelbyville' }, headers);
    expect(edited.statusCode).toBe(200);
    expect(edited.json.data.created).toBe(false);
    expect(edited.json.data.address).toMatchObject({ address_id: created.json.data.address.address_id, address1: '2 Elm St', city: 'Shelbyville', zip: null, country_code_id: 1, is_default: true });
    const rows = await db().selectFrom('usa_users_addrs').selectAll().where('usa_usr_user_id', '=', userId).execute();
    expect(rows).toHaveLength(1);
  });

  it('edits a named address, moving the default flag', async () => {
    const { headers, userId } = await t.keyHeaders();
    const first = await post('address_edit', { usa_address1: 'Home 1', usa_city: 'A' }, headers);
    const secondId = (
      await db().insertInto('usa_users_addrs').values({ usa_usr_user_id: userId, usa_address1: 'Work', usa_city: 'B', usa_is_default: false }).returning('usa_users_addr_id').executeTakeFirstOrThrow()
    ).usa_users_addr_id;
    const res = await post('address_edit', { usa_users_addr_id: secondId, usa_address1: 'Work 2', usa_city: 'B', usa_is_default: true }, headers);
    expect(res.statusCode).toBe(200);
    expect(res.json.data.address).toMatchObject({ address_id: secondId, address1: 'Work 2', is_default: true });
    const old = await db().selectFrom('usa_users_addrs').select('usa_is_default').where('usa_users_addr_id', '=', first.json.data.address.address_id).executeTakeFirstOrThrow();
    expect(old.usa_is_default).toBe(false);
  });

  it("422 ActionError for another user's address; 422 ValidationError for missing fields", async () => {
    const a = await t.keyHeaders();
    const b = await t.keyHeaders();
    const theirs = await post('address_edit', { usa_address1: 'Theirs', usa_city: 'X' }, a.headers);
    const res = await post('address_edit', { usa_users_addr_id: theirs.json.data.address.address_id, usa_address1: 'Mine now', usa_city: 'Y' }, b.headers);
    expect(res.statusCode).toBe(422);
    expect(res.json).toEqual({ api_version: '1.0', errortype: 'ActionError', error: 'No such address on this account', data: { reason: 'address_not_found' } });
    const invalid = await post('address_edit', { usa_zip_code_id: '12345678901' }, b.headers);
    expect(invalid.statusCode).toBe(422);
    expect(invalid.json.validation_errors).toEqual({ usa_address1: 'is required', usa_city: 'is required', usa_zip_code_id: 'must be at most 10 characters' });
  });

  it('serves a form prefilled with the default address', async () => {
    const { headers } = await t.keyHeaders();
    await post('address_edit', { usa_address1: '9 Oak Rd', usa_city: 'Ogdenville', usa_state: 'OR' }, headers);
    const form = await t.request({ method: 'GET', url: '/api/v1/form/address_edit', headers });
    expect(form.statusCode).toBe(200);
    const byName = Object.fromEntries(form.json.data.fields.map((f: { name: string; value: unknown }) => [f.name, f.value]));
    expect(byName).toMatchObject({ usa_address1: '9 Oak Rd', usa_city: 'Ogdenville', usa_state: 'OR', usa_is_default: true });
  });
});

describe('phone_numbers_edit', () => {
  it('adds a first number as the default and mirrors it on the user', async () => {
    const { headers, userId } = await t.keyHeaders();
    const res = await post('phone_numbers_edit', { phn_phone_number: '+1 (555) 010-2000' }, headers);
    expect(res.statusCode).toBe(200);
    const phone = res.json.data.phone_number;
    expect(phone).toEqual({ phone_number_id: expect.any(Number), phone_number: '+1 (555) 010-2000', country_code_id: 1, is_private: false, is_verified: false, is_default: true });
    const u = await db().selectFrom('usr_users').select('usr_phn_phone_number_id').where('usr_user_id', '=', userId).executeTakeFirstOrThrow();
    expect(u.usr_phn_phone_number_id).toBe(phone.phone_number_id);
  });

  it('adds a second number, changes one (losing verification), moves the default and removes one', async () => {
    const { headers, userId } = await t.keyHeaders();
    const first = (await post('phone_numbers_edit', { phn_phone_number: '555-0100' }, headers)).json.data.phone_number;
    const second = await post('phone_numbers_edit', { phn_phone_number: '555-0200', phn_is_private: 'true' }, headers);
    expect(second.json.data.phone_number).toMatchObject({ is_default: false, is_private: true });
    expect(second.json.data.phone_numbers).toHaveLength(2);
    await db().updateTable('phn_phone_numbers').set({ phn_is_verified: true }).where('phn_phone_number_id', '=', first.phone_number_id).execute();
    const changed = await post('phone_numbers_edit', { phn_phone_number_id: first.phone_number_id, phn_phone_number: '555-0101' }, headers);
    expect(changed.json.data.phone_number).toMatchObject({ phone_number: '555-0101', is_verified: false, is_default: true });
    const moved = await post('phone_numbers_edit', { phn_phone_number_id: second.json.data.phone_number.phone_number_id, phn_is_default: true }, headers);
    expect(moved.json.data.phone_numbers.map((p: { is_default: boolean }) => p.is_default)).toEqual([false, true]);
    const removed = await post('phone_numbers_edit', { phn_phone_number_id: second.json.data.phone_number.phone_number_id, remove: true }, headers);
    expect(removed.statusCode).toBe(200);
    expect(removed.json.data.phone_numbers.map((p: { phone_number: string }) => p.phone_number)).toEqual(['555-0101']);
    const u = await db().selectFrom('usr_users').select('usr_phn_phone_number_id').where('usr_user_id', '=', userId).executeTakeFirstOrThrow();
    expect(u.usr_phn_phone_number_id).toBeNull();
  });

  it('refuses a malformed number, a missing one, and a number of another user', async () => {
    const a = await t.keyHeaders();
    const b = await t.keyHeaders();
    const bad = await post('phone_numbers_edit', { phn_phone_number: 'call me maybe' }, a.headers);
    expect(bad.statusCode).toBe(422);
    expect(bad.json.validation_errors).toEqual({ phn_phone_number: 'must be a phone number' });
    const missing = await post('phone_numbers_edit', {}, a.headers);
    expect(missing.json.validation_errors).toEqual({ phn_phone_number: 'is required' });
    const theirs = (await post('phone_numbers_edit', { phn_phone_number: '555-0300' }, a.headers)).json.data.phone_number;
    const res = await post('phone_numbers_edit', { phn_phone_number_id: theirs.phone_number_id, phn_phone_number: '555-0400' }, b.headers);
    expect(res.statusCode).toBe(422);
    expect(res.json.data).toEqual({ reason: 'phone_number_not_found' });
  });

  it('needs write capability', async () => {
    const { headers } = await t.keyHeaders({ permission: 1 });
    expect((await post('phone_numbers_edit', { phn_phone_number: '555-0500' }, headers)).statusCode).toBe(403);
  });
});
