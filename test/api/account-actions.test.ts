import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueCode } from '../../src/accounts/activation-codes.js';
import { sha256Hex } from '../../src/lib/crypto.js';
import { formatTimestamp } from '../../src/lib/time.js';
import { formBody } from '../helpers/actions.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

const post = (name: string, payload: Record<string, unknown>, headers: Record<string, string> = {}) =>
  t.request({ method: 'POST', url: `/api/v1/action/${name}`, payload, headers });

const outboxFor = (to: string) => t.services.db.selectFrom('mob_mail_outbox').selectAll().where('mob_to', '=', to).orderBy('mob_mail_outbox_id').execute();
const user = (id: number) => t.services.db.selectFrom('usr_users').selectAll().where('usr_user_id', '=', id).executeTakeFirstOrThrow();
const sessionWorks = async (headers: Record<string, string>) => (await t.request({ method: 'GET', url: '/api/v1/auth/session', headers })).statusCode;

async function resetCodeFor(email: string): Promise<string> {
  const res = await post('password_reset_1', { email });
  expect(res.statusCode).toBe(200);
  const mails = await outboxFor(email);
  const m = /act_code=([0-9a-f]+)/.exec(mails.at(-1)!.mob_text);
  return m![1]!;
}

describe('register', () => {
  const valid = { usr_first_name: 'Ada', usr_last_name: 'Lovelace', usr_email: 'ada@example.com', password: 'analytical1', password_confirm: 'analytical1' };

  it('creates an account without key headers, mails a welcome, and the new password signs in', async () => {
    const res = await post('register', { ...valid, newsletter: true, contact_preferences: ['sms', 'email'] });
    expect(res.statusCode).toBe(200);
    expect(res.json).toEqual({
      api_version: '1.0',
      success_message: 'Your account has been created.',
      data: { user_id: expect.any(Number), email: 'ada@example.com' },
      redirect: '/login',
    });
    const row = await user(res.json.data.user_id);
    expect(row).toMatchObject({ usr_first_name: 'Ada', usr_last_name: 'Lovelace', usr_email: 'ada@example.com', usr_permission: 0, usr_contact_preferences: 'sms,email' });
    expect(row.usr_password).not.toContain('analytical1');
    const mail = await outboxFor('ada@example.com');
    expect(mail.map((m) => [m.mob_template, m.mob_subject])).toEqual([['welcome', 'Welcome to Gatehouse']]);
    await t.login('ada@example.com', 'analytical1');
  });

  it('accepts a form body', async () => {
    const body = formBody([['usr_first_name', 'Form'], ['usr_last_name', ''], ['usr_email', 'form@example.com'], ['password', 'formbody12'], ['newsletter', 'on'], ['contact_preferences[]', 'post']]);
    const res = await t.request({ method: 'POST', url: '/api/v1/action/register', payload: body.payload, headers: body.headers });
    expect(res.statusCode).toBe(200);
    expect(await user(res.json.data.user_id)).toMatchObject({ usr_first_name: 'Form', usr_last_name: null, usr_contact_preferences: 'post' });
  });

  it('422 ValidationError for a taken address, compared case-insensitively', async () => {
    const res = await post('register', { ...valid, usr_email: 'ADA@example.com' });
    expect(res.statusCode).toBe(422);
    expect(res.json.errortype).toBe('ValidationError');
    expect(res.json.validation_errors).toEqual({ usr_email: 'is already registered' });
  });

  it('422 ValidationError listing every missing or invalid field', async () => {
    const res = await post('register', { usr_email: 'not-an-email', usr_last_name: 'x'.repeat(33), password: 'short', contact_preferences: ['fax'] });
    expect(res.statusCode).toBe(422);
    expect(res.json.validation_errors).toEqual({
      usr_first_name: 'is required',
      usr_last_name: 'must be at most 32 characters',
      usr_email: 'must be a valid email address',
      password: 'must be at least 8 characters',
      contact_preferences: 'item 0: must be one of: email, sms, phone, post',
    });
  });

  it('422 when the confirmation differs, and no account is created', async () => {
    const res = await post('register', { ...valid, usr_email: 'mismatch@example.com', password_confirm: 'different1' });
    expect(res.statusCode).toBe(422);
    expect(res.json.validation_errors).toEqual({ password_confirm: 'does not match the password' });
    expect(await t.services.db.selectFrom('usr_users').select('usr_user_id').where('usr_email', '=', 'mismatch@example.com').execute()).toEqual([]);
  });
});

describe('password_reset_1 and password_reset_2', () => {
  it('answers identically whether or not the address has an account, mailing only a real one', async () => {
    const { email } = await t.createUser();
    const known = await post('password_reset_1', { email });
    const unknown = await post('password_reset_1', { email: 'nobody@example.com' });
    expect(known.statusCode).toBe(200);
    expect(unknown.statusCode).toBe(200);
    expect(unknown.body).toBe(known.body);
    expect(known.json).toEqual({ api_version: '1.0', success_message: 'If an account exists for that email address, a link to reset its password is on its way.', data: {} });
    expect((await outboxFor(email)).map((m) => m.mob_template)).toEqual(['password_reset']);
    expect(await outboxFor('nobody@example.com')).toEqual([]);
  });

  it('stores only a hash of the reset code', async () => {
    const { email, userId } = await t.createUser();
    const code = await resetCodeFor(email);
    const rows = await t.services.db.selectFrom('act_activation_codes').selectAll().where('act_usr_user_id', '=', userId).execute();
    expect(rows).toHaveLength(1);
    expect(rows[0]!.act_code_hash).toBe(sha256Hex(code));
    expect(JSON.stringify(rows)).not.toContain(code);
  });

  it('sets the new password with the code, revokes session keys and keeps machine keys', async () => {
    const { email, password, userId } = await t.createUser();
    const session = await t.login(email, password);
    const machine = await t.createMachineKey({ userId, permission: 1 });
    const code = await resetCodeFor(email);
    const res = await post('password_reset_2', { act_code: code, password: 'brand-new-pw', password_confirm: 'brand-new-pw' });
    expect(res.statusCode).toBe(200);
    expect(res.json).toEqual({ api_version: '1.0', success_message: 'Your password has been changed. Please sign in.', data: { session_keys_revoked: 1 }, redirect: '/login' });
    expect(await sessionWorks(session.headers)).toBe(401);
    expect(await sessionWorks({ public_key: machine.publicKey, secret_key: machine.secretKey })).toBe(200);
    await t.login(email, 'brand-new-pw');
    const old = await t.request({ method: 'POST', url: '/api/v1/auth/login', payload: { email, password } });
    expect(old.statusCode).toBe(401);
  });

  it('a code works once', async () => {
    const { email } = await t.createUser();
    const code = await resetCodeFor(email);
    expect((await post('password_reset_2', { act_code: code, password: 'first-change', password_confirm: 'first-change' })).statusCode).toBe(200);
    const again = await post('password_reset_2', { act_code: code, password: 'second-change', password_confirm: 'second-change' });
    expect(again.statusCode).toBe(422);
    expect(again.json).toEqual({ api_version: '1.0', errortype: 'ActionError', error: 'This reset code is invalid, already used or expired', data: { reason: 'invalid_code' } });
  });

  it('a used reset retires the other outstanding codes of the user', async () => {
    const { email } = await t.createUser();
    const older = await resetCodeFor(email);
    const newer = await resetCodeFor(email);
    expect((await post('password_reset_2', { act_code: newer, password: 'reset-pw-123', password_confirm: 'reset-pw-123' })).statusCode).toBe(200);
    expect((await post('password_reset_2', { act_code: older, password: 'reset-pw-456', password_confirm: 'reset-pw-456' })).statusCode).toBe(422);
  });

  it('a code expires after an hour', async () => {
    const { email } = await t.createUser();
    const code = await resetCodeFor(email);
    t.clock.advance(60 * 60_000 + 1000);
    const res = await post('password_reset_2', { act_code: code, password: 'too-late-pw', password_confirm: 'too-late-pw' });
    expect(res.statusCode).toBe(422);
    expect(res.json.data.reason).toBe('invalid_code');
  });

  it('refuses an unknown code and a mismatched confirmation', async () => {
    const unknown = await post('password_reset_2', { act_code: 'f'.repeat(48), password: 'whatever-1', password_confirm: 'whatever-1' });
    expect(unknown.statusCode).toBe(422);
    expect(unknown.json.errortype).toBe('ActionError');
    const mismatch = await post('password_reset_2', { act_code: 'x', password: 'whatever-1', password_confirm: 'whatever-2' });
    expect(mismatch.statusCode).toBe(422);
    expect(mismatch.json.validation_errors).toEqual({ password_confirm: 'does not match the password' });
  });
});

describe('password_set', () => {
  it('sets the first password with an activation code and activates the account', async () => {
    const { userId, email } = await t.createUser();
    await t.services.db.updateTable('usr_users').set({ usr_password: null, usr_is_activated: false }).where('usr_user_id', '=', userId).execute();
    const code = await issueCode(t.services.db, userId, 'activation', t.clock.now());
    const res = await post('password_set', { act_code: code, password: 'first-password', password_confirm: 'first-password' });
    expect(res.statusCode).toBe(200);
    expect(res.json).toEqual({ api_version: '1.0', success_message: 'Your password has been set. Please sign in.', data: { user_id: userId }, redirect: '/login' });
    expect(await user(userId)).toMatchObject({ usr_is_activated: true, usr_email_is_verified: true });
    await t.login(email, 'first-password');
    const reuse = await post('password_set', { act_code: code, password: 'second-password', password_confirm: 'second-password' });
    expect(reuse.statusCode).toBe(422);
  });

  it('a reset code is not an activation code', async () => {
    const { email } = await t.createUser();
    const code = await resetCodeFor(email);
    const res = await post('password_set', { act_code: code, password: 'first-password', password_confirm: 'first-password' });
    expect(res.statusCode).toBe(422);
    expect(res.json.data.reason).toBe('invalid_code');
  });
});

describe('password_edit', () => {
  it('changes the password and revokes every session key of the owner, including the caller', async () => {
    const { email, password, userId } = await t.createUser();
    const a = await t.login(email, password);
    const b = await t.login(email, password);
    const machine = await t.createMachineKey({ userId, permission: 3 });
    const res = await post('password_edit', { current_password: password, new_password: 'changed-pw-1' }, a.headers);
    expect(res.statusCode).toBe(200);
    expect(res.json).toEqual({ api_version: '1.0', success_message: 'Your password has been changed.', data: { session_keys_revoked: 2 } });
    expect(await sessionWorks(a.headers)).toBe(401);
    expect(await sessionWorks(b.headers)).toBe(401);
    expect(await sessionWorks({ public_key: machine.publicKey, secret_key: machine.secretKey })).toBe(200);
    await t.login(email, 'changed-pw-1');
  });

  it('422 ValidationError for a wrong current password, leaving the password and keys alone', async () => {
    const { email, password } = await t.createUser();
    const s = await t.login(email, password);
    const res = await post('password_edit', { current_password: 'wrong-one', new_password: 'changed-pw-2' }, s.headers);
    expect(res.statusCode).toBe(422);
    expect(res.json.validation_errors).toEqual({ current_password: 'is incorrect' });
    expect(await sessionWorks(s.headers)).toBe(200);
  });

  it('needs key headers, write capability and a long enough new password', async () => {
    expect((await post('password_edit', { current_password: 'x', new_password: 'changed-pw-3' })).statusCode).toBe(400);
    const { headers } = await t.keyHeaders({ permission: 1 });
    expect((await post('password_edit', { current_password: 'x', new_password: 'changed-pw-3' }, headers)).statusCode).toBe(403);
    const w = await t.keyHeaders({ permission: 2 });
    const short = await post('password_edit', { current_password: 'x', new_password: 'short' }, w.headers);
    expect(short.statusCode).toBe(422);
    expect(short.json.validation_errors).toEqual({ new_password: 'must be at least 8 characters' });
  });
});

describe('change_password_required', () => {
  it('refuses with 422 ActionError when no change is required', async () => {
    const { headers } = await t.keyHeaders();
    const res = await post('change_password_required', { new_password: 'forced-pw-1' }, headers);
    expect(res.statusCode).toBe(422);
    expect(res.json).toEqual({ api_version: '1.0', errortype: 'ActionError', error: 'No password change is required for this account', data: { reason: 'not_required' } });
  });

  it('sets the password, clears the flag and revokes session keys', async () => {
    const { userId, email, password } = await t.createUser();
    await t.services.db.updateTable('usr_users').set({ usr_force_password_change: true }).where('usr_user_id', '=', userId).execute();
    const s = await t.login(email, password);
    const res = await post('change_password_required', { new_password: 'forced-pw-2' }, s.headers);
    expect(res.statusCode).toBe(200);
    expect(res.json.data).toEqual({ session_keys_revoked: 1 });
    expect((await user(userId)).usr_force_password_change).toBe(false);
    expect(await sessionWorks(s.headers)).toBe(401);
    await t.login(email, 'forced-pw-2');
  });
});

describe('contact_preferences', () => {
  it('stores the chosen channels in a stable order', async () => {
    const { headers, userId } = await t.keyHeaders();
    const res = await post('contact_preferences', { contact_preferences: ['post', 'email', 'post'] }, headers);
    expect(res.statusCode).toBe(200);
    expect(res.json.data).toEqual({ contact_preferences: ['email', 'post'], changed_time: formatTimestamp(t.clock.now()) });
    expect((await user(userId)).usr_contact_preferences).toBe('email,post');
  });

  it('an empty form (nothing ticked) clears every channel', async () => {
    const { headers, userId } = await t.keyHeaders();
    await post('contact_preferences', { contact_preferences: ['sms'] }, headers);
    const res = await post('contact_preferences', {}, headers);
    expect(res.json.data.contact_preferences).toEqual([]);
    expect((await user(userId)).usr_contact_preferences).toBe('');
  });

  it('422 for an unknown channel', async () => {
    const { headers } = await t.keyHeaders();
    const res = await post('contact_preferences', { contact_preferences: ['pigeon'] }, headers);
    expect(res.statusCode).toBe(422);
    expect(res.json.validation_errors).toEqual({ contact_preferences: 'item 0: must be one of: email, sms, phone, post' });
  });
});

describe('account_edit', () => {
  it('updates the profile and returns it', async () => {
    const { headers, userId } = await t.keyHeaders();
    const before = await user(userId);
    const res = await post(
      'account_edit',
      { usr_first_name: 'Grace', usr_last_name: 'Hopper', usr_nickname: 'Amazing Grace', usr_email: before.usr_email, usr_timezone: 'Europe/Paris', usr_bio: 'Wrote a compiler', usr_date_of_birth: '1906-12-09', usr_gender: 'self_describe', gender_self_describe: 'Rear admiral' },
      headers,
    );
    expect(res.statusCode).toBe(200);
    expect(res.json).toEqual({
      api_version: '1.0',
      success_message: 'Your profile has been saved.',
      data: {
        user: {
          user_id: userId,
          first_name: 'Grace',
          last_name: 'Hopper',
          nickname: 'Amazing Grace',
          email: before.usr_email,
          email_is_verified: false,
          timezone: 'Europe/Paris',
          bio: 'Wrote a compiler',
          date_of_birth: '1906-12-09',
          gender: 'self_describe',
          gender_self_describe: 'Rear admiral',
        },
      },
    });
    expect((await user(userId)).usr_gender).toBe('Rear admiral');
  });

  it('an email change marks the address unverified', async () => {
    const { headers, userId } = await t.keyHeaders();
    await t.services.db.updateTable('usr_users').set({ usr_email_is_verified: true }).where('usr_user_id', '=', userId).execute();
    const res = await post('account_edit', { usr_first_name: 'New', usr_email: `moved-${userId}@example.com` }, headers);
    expect(res.statusCode).toBe(200);
    expect(await user(userId)).toMatchObject({ usr_email: `moved-${userId}@example.com`, usr_email_is_verified: false });
  });

  it('422 ValidationError for a taken email, an unknown time zone, a future birth date and a missing self description', async () => {
    const other = await t.createUser();
    const { headers } = await t.keyHeaders();
    const res = await post(
      'account_edit',
      { usr_first_name: 'X', usr_email: other.email.toUpperCase(), usr_timezone: 'Mars/Olympus', usr_date_of_birth: '2030-01-01', usr_gender: 'self_describe' },
      headers,
    );
    expect(res.statusCode).toBe(422);
    expect(res.json.validation_errors).toEqual({
      usr_email: 'is already used by another account',
      usr_timezone: 'is not a known time zone',
      usr_date_of_birth: 'must not be in the future',
      gender_self_describe: 'is required when describing yourself',
    });
  });

  it('422 for input outside the schema, and 403 for a read-only key', async () => {
    const { headers } = await t.keyHeaders();
    const bad = await post('account_edit', { usr_first_name: 'x'.repeat(33), usr_email: 'ok@example.com', usr_gender: 'other' }, headers);
    expect(bad.statusCode).toBe(422);
    expect(bad.json.validation_errors).toEqual({ usr_first_name: 'must be at most 32 characters', usr_gender: 'must be one of: female, male, non_binary, prefer_not_to_say, self_describe' });
    const ro = await t.keyHeaders({ permission: 1 });
    expect((await post('account_edit', { usr_first_name: 'x', usr_email: 'ok@example.com' }, ro.headers)).statusCode).toBe(403);
  });
});
