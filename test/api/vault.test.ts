import { createHmac } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PRF_SALT } from '../../src/accounts/vault/crypto.js';
import { newContentKey, read, resealContentKey, sealField } from '../../src/accounts/vault/sealed.js';
import { vaultOf } from '../../src/accounts/vault/vaults.js';
import { DatabaseVaultWindowStore, RedisVaultWindowStore } from '../../src/accounts/vault/window-store.js';
import { up as destroyRetiredWraps } from '../../src/db/migrations/0029_vault_destroy_retired_wraps.js';
import { buildApp } from '../../src/boot/app.js';
import { MemoryRateLimitStore } from '../../src/http/rate-limit/memory-store.js';
import { createServices } from '../../src/boot/compose.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { addForTest } from '../helpers/composed.js';
import { signIn, webClient, type WebClient } from '../helpers/browser-session.js';
import { holdRotation, settledOrWaiting } from '../helpers/interleave.js';
import { SoftAuthenticator } from '../helpers/soft-authenticator.js';

const ORIGIN = 'https://members.example.com';
const RP_ID = 'members.example.com';
const action = (name: string) => `/api/v1/action/${name}`;
const VAULT_ACTIONS = [
  'vault_setup_options',
  'vault_setup_verify',
  'vault_status',
  'vault_unlock_options',
  'vault_unlock_passkey',
  'vault_unlock_recovery',
  'vault_unlock_passphrase',
  'vault_lock',
  'vault_heartbeat',
  'vault_add_passkey_options',
  'vault_add_passkey_verify',
  'vault_regenerate_codes',
  'vault_passphrase_enroll',
  'vault_passphrase_remove',
  'vault_rotate_options',
  'vault_rotate_verify',
];

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ config: { baseUrl: ORIGIN } });
});
afterAll(async () => t.close());

async function post(c: WebClient, name: string, payload: unknown = {}, headers?: Record<string, string>) {
  return c.api('POST', action(name), { payload, ...(headers ? { headers } : {}) });
}

/** What an authenticator's PRF would answer for the vault salt: fixed per credential. */
function prfOf(credentialId: string): string {
  return createHmac('sha256', credentialId).update(PRF_SALT).digest().toString('base64url');
}

async function enrollPasskey(c: WebClient, auth: SoftAuthenticator, password?: string) {
  const options = await post(c, 'passkey_register_options', password ? { current_password: password } : {});
  expect(options.statusCode).toBe(200);
  const res = await post(c, 'passkey_register_verify', auth.register(options.json.data));
  expect(res.statusCode).toBe(200);
  return res.json.data.passkey.passkey_id as number;
}

async function stepUp(c: WebClient, auth: SoftAuthenticator) {
  const options = await post(c, 'passkey_stepup_options');
  expect((await post(c, 'passkey_stepup_verify', auth.assert(options.json.data))).statusCode).toBe(200);
}

/** A signed-in member with a vault: with a PRF passkey unlocker unless passkey is false. */
async function memberWithVault(opts: { passkey?: boolean; passphrase?: string; remoteAddress?: string } = {}) {
  const u = await t.createUser();
  const c = await signIn(t, u.email, u.password, opts.remoteAddress);
  const auth = new SoftAuthenticator(ORIGIN, RP_ID, { prf: true });
  const passkeyId = opts.passkey === false ? null : await enrollPasskey(c, auth, u.password);
  const options = await post(c, 'vault_setup_options', { password: u.password });
  expect(options.statusCode).toBe(200);
  const assertion = passkeyId ? { ...auth.assert(options.json.data), prf_output: prfOf(auth.credentials[0]!.id) } : {};
  const res = await post(c, 'vault_setup_verify', { acknowledge_loss: true, ...(opts.passphrase ? { passphrase: opts.passphrase } : {}), ...assertion });
  expect(res.statusCode).toBe(200);
  return { ...u, c, auth, passkeyId, codes: res.json.data.recovery_codes as string[], setup: res.json.data };
}

async function unlockByPasskey(c: WebClient, auth: SoftAuthenticator, prf = prfOf(auth.credentials[0]!.id)) {
  const options = await post(c, 'vault_unlock_options');
  expect(options.statusCode).toBe(200);
  return post(c, 'vault_unlock_passkey', { ...auth.assert(options.json.data), prf_output: prf });
}

async function status(c: WebClient) {
  const res = await post(c, 'vault_status');
  expect(res.statusCode).toBe(200);
  return res.json.data;
}

describe('vault actions are for browser sessions only', () => {
  it('answers 403 AuthenticationError to machine and session keys on every vault action', async () => {
    const machine = await t.keyHeaders();
    const u = await t.createUser();
    const session = await t.login(u.email, u.password);
    for (const headers of [machine.headers, session.headers]) {
      for (const name of VAULT_ACTIONS) {
        const res = await t.request({ method: 'POST', url: action(name), headers, payload: {} });
        expect([name, res.statusCode, res.json.errortype]).toEqual([name, 403, 'AuthenticationError']);
      }
    }
  });

  it('publishes all sixteen with input schemas as sessioned browser-only actions', async () => {
    const { headers } = await t.keyHeaders();
    const res = await t.request({ method: 'GET', url: '/api/v1/actions', headers });
    for (const name of VAULT_ACTIONS) {
      expect(res.json.data[name], name).toBeDefined();
      expect(res.json.data[name].requires_session).toBe(true);
      expect(res.json.data[name].input).not.toBeNull();
    }
    expect(res.json.data.vault_setup_verify.input.acknowledge_loss).toEqual({ type: 'bool', required: true });
    expect(res.json.data.vault_unlock_recovery.input.code.required).toBe(true);
  });
});

describe('setup', () => {
  it('needs the account password, then acknowledge_loss, within the setup ceremony', async () => {
    const u = await t.createUser();
    const c = await signIn(t, u.email, u.password);
    const wrong = await post(c, 'vault_setup_options', { password: 'not-the-password' });
    expect([wrong.statusCode, wrong.json.errortype, wrong.json.validation_errors]).toEqual([422, 'ValidationError', { password: 'is incorrect' }]);
    const noCeremony = await post(c, 'vault_setup_verify', { acknowledge_loss: true });
    expect([noCeremony.statusCode, noCeremony.json.errortype, noCeremony.json.data.reason]).toEqual([422, 'ActionError', 'no_ceremony']);
    expect((await post(c, 'vault_setup_options', { password: u.password })).statusCode).toBe(200);
    const unacknowledged = await post(c, 'vault_setup_verify', { acknowledge_loss: false });
    expect(unacknowledged.statusCode).toBe(422);
    expect(unacknowledged.json.errortype).toBe('ValidationError');
    expect(Object.keys(unacknowledged.json.validation_errors)).toEqual(['acknowledge_loss']);
    expect((await status(c)).set_up).toBe(false);
  });

  it('makes 10 codes shown once, wraps the PRF passkey, opens the window, and refuses a second setup', async () => {
    const m = await memberWithVault();
    expect(m.codes).toHaveLength(10);
    for (const code of m.codes) expect(code).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(m.setup).toMatchObject({ set_up: true, unlocked: true, key_generation: 1, recovery_codes_left: 10, regenerate_recommended: false });
    expect(m.setup.unlockers.map((u: { type: string }) => u.type)).toEqual(['passkey', 'recovery']);
    const s = await status(m.c);
    expect(s).not.toHaveProperty('recovery_codes');
    expect(s.window.idle_expires_time).toBe('2026-03-01 12:30:00');
    expect(s.window.absolute_expires_time).toBeNull();
    const again = await post(m.c, 'vault_setup_options', { password: m.password });
    expect([again.statusCode, again.json.data.reason]).toEqual([422, 'already_set_up']);
  });

  it('an account with a vault cannot sign in with a passkey alone', async () => {
    const m = await memberWithVault();
    const c = webClient(t);
    await c.get('/login');
    const options = await post(c, 'passkey_login_options');
    const res = await post(c, 'passkey_login_verify', m.auth.assert(options.json.data));
    expect([res.statusCode, res.json.errortype, res.json.data.reason]).toEqual([422, 'ActionError', 'password_required']);
  });
});

describe('lock and unlock', () => {
  it('locks, and unlocks by passkey PRF; a wrong PRF output does not unlock', async () => {
    const m = await memberWithVault();
    expect((await post(m.c, 'vault_lock')).json.data).toEqual({ unlocked: false });
    expect((await status(m.c)).unlocked).toBe(false);
    expect((await post(m.c, 'vault_heartbeat')).json.data).toEqual({ alive: false });
    const bad = await unlockByPasskey(m.c, m.auth, Buffer.alloc(32, 7).toString('base64url'));
    expect([bad.statusCode, bad.json.data.reason]).toEqual([422, 'unlock_failed']);
    const short = await unlockByPasskey(m.c, m.auth, 'abc');
    expect([short.statusCode, short.json.errortype]).toEqual([422, 'ValidationError']);
    const ok = await unlockByPasskey(m.c, m.auth);
    expect(ok.statusCode).toBe(200);
    expect(ok.json.data.unlocked).toBe(true);
    expect((await post(m.c, 'vault_heartbeat')).json.data).toEqual({ alive: true });
  });

  it('unlocks by a recovery code with the password; a spent code never works again', async () => {
    const m = await memberWithVault({ passkey: false });
    await post(m.c, 'vault_lock');
    const noPassword = await post(m.c, 'vault_unlock_recovery', { password: 'wrong-password', code: m.codes[0] });
    expect([noPassword.statusCode, noPassword.json.validation_errors]).toEqual([422, { password: 'is incorrect' }]);
    const typed = m.codes[0]!.toLowerCase().replace(/(.{5})/g, '$1-');
    const ok = await post(m.c, 'vault_unlock_recovery', { password: m.password, code: typed });
    expect(ok.statusCode).toBe(200);
    expect(ok.json.data).toMatchObject({ unlocked: true, recovery_codes_left: 9 });
    await post(m.c, 'vault_lock');
    const again = await post(m.c, 'vault_unlock_recovery', { password: m.password, code: m.codes[0] });
    expect([again.statusCode, again.json.errortype, again.json.data.reason]).toEqual([422, 'ActionError', 'unlock_failed']);
    const unknown = await post(m.c, 'vault_unlock_recovery', { password: m.password, code: '0'.repeat(26) });
    expect(unknown.json.data.reason).toBe('unlock_failed');
    expect((await status(m.c)).unlocked).toBe(false);
  });

  it('unlocks by passphrase with the password; enroll needs step-up and an open window; remove keeps the floor', async () => {
    const m = await memberWithVault({ passkey: false, passphrase: 'a long vault passphrase' });
    await post(m.c, 'vault_lock');
    const wrong = await post(m.c, 'vault_unlock_passphrase', { password: m.password, passphrase: 'not the passphrase' });
    expect([wrong.statusCode, wrong.json.data.reason]).toEqual([422, 'unlock_failed']);
    const locked = await post(m.c, 'vault_passphrase_enroll', { passphrase: 'another long passphrase', password: m.password });
    expect([locked.statusCode, locked.json.data.reason]).toEqual([422, 'vault_locked']);
    expect((await post(m.c, 'vault_unlock_passphrase', { password: m.password, passphrase: 'a long vault passphrase' })).statusCode).toBe(200);
    const noStepUp = await post(m.c, 'vault_passphrase_enroll', { passphrase: 'another long passphrase' });
    expect([noStepUp.statusCode, noStepUp.json.validation_errors]).toEqual([422, { password: 'is required' }]);
    expect((await post(m.c, 'vault_passphrase_enroll', { passphrase: 'another long passphrase', password: m.password })).statusCode).toBe(200);
    await post(m.c, 'vault_lock');
    expect((await post(m.c, 'vault_unlock_passphrase', { password: m.password, passphrase: 'a long vault passphrase' })).json.data.reason).toBe('unlock_failed');
    expect((await post(m.c, 'vault_unlock_passphrase', { password: m.password, passphrase: 'another long passphrase' })).statusCode).toBe(200);
    const removed = await post(m.c, 'vault_passphrase_remove', { password: m.password });
    expect(removed.statusCode).toBe(200);
    expect(removed.json.data.unlockers.map((u: { type: string }) => u.type)).toEqual(['recovery']);
    expect((await post(m.c, 'vault_passphrase_remove', { password: m.password })).json.data.reason).toBe('no_passphrase');
  });

  it('refuses the vault actions before setup', async () => {
    const u = await t.createUser();
    const c = await signIn(t, u.email, u.password);
    expect(await status(c)).toEqual({ set_up: false, unlocked: false, key_generation: null, unlockers: [], recovery_codes_left: 0, regenerate_recommended: false, window: null });
    for (const name of ['vault_unlock_options', 'vault_add_passkey_options', 'vault_rotate_options']) {
      expect((await post(c, name)).json.data.reason).toBe('vault_not_set_up');
    }
  });
});

describe('the window', () => {
  it('closes after 300 s without a heartbeat, and heartbeats never extend the 30-minute decrypt idle', async () => {
    const m = await memberWithVault();
    t.clock.advanceSeconds(301);
    expect((await post(m.c, 'vault_heartbeat')).json.data).toEqual({ alive: false });
    expect((await unlockByPasskey(m.c, m.auth)).statusCode).toBe(200);
    for (let i = 0; i < 7; i++) {
      t.clock.advanceSeconds(250);
      expect((await post(m.c, 'vault_heartbeat')).json.data).toEqual({ alive: true });
    }
    t.clock.advanceSeconds(30 * 60 - 7 * 250);
    expect((await post(m.c, 'vault_heartbeat')).json.data).toEqual({ alive: false });
    expect((await status(m.c)).unlocked).toBe(false);
  });

  it('takes its caps from the highest protection level: private 7 days, fortress 2 h / 24 h, unknown as fortress', async () => {
    const levels = new Map<number, string[]>();
    const unregister = addForTest(t.services.vaultParts.levelSources, async (_db, userId) => levels.get(userId) ?? []);
    try {
      const cases: Array<[string[], string, string | null]> = [
        [['private'], '2026-03-01 12:30:00', '2026-03-08 12:00:00'],
        [['private', 'fortress'], '2026-03-01 12:30:00', '2026-03-02 12:00:00'],
        [['sealed-shut'], '2026-03-01 12:30:00', '2026-03-02 12:00:00'],
        [['standard'], '2026-03-01 12:30:00', null],
      ];
      for (const [userLevels, idle, absolute] of cases) {
        const u = await t.createUser();
        levels.set(u.userId, userLevels);
        const c = await signIn(t, u.email, u.password);
        await post(c, 'vault_setup_options', { password: u.password });
        const res = await post(c, 'vault_setup_verify', { acknowledge_loss: true });
        const start = t.clock.now().getTime();
        const fmt = (d: string) => new Date(new Date(`${d.replace(' ', 'T')}Z`).getTime() - Date.parse('2026-03-01T12:00:00Z') + start).toISOString().replace('T', ' ').slice(0, 19);
        expect(res.json.data.window, userLevels.join()).toEqual({ idle_expires_time: fmt(idle), absolute_expires_time: absolute ? fmt(absolute) : null });
      }
    } finally {
      unregister();
    }
  });

  it('closes when the client address changes', async () => {
    const m = await memberWithVault({ remoteAddress: '10.0.0.1' });
    expect((await status(m.c)).unlocked).toBe(true);
    const elsewhere = webClient(t, '10.0.0.2');
    for (const [k, v] of m.c.jar.cookies) elsewhere.jar.cookies.set(k, v);
    expect((await post(elsewhere, 'vault_status')).json.data.unlocked).toBe(false);
    expect((await status(m.c)).unlocked).toBe(false);
  });

  it('belongs to its session only, and a password change closes every window of the user', async () => {
    const m = await memberWithVault({ passkey: false });
    const other = await signIn(t, m.email, m.password);
    expect((await status(other)).unlocked).toBe(false);
    expect((await post(other, 'vault_unlock_recovery', { password: m.password, code: m.codes[1] })).statusCode).toBe(200);
    expect((await status(m.c)).unlocked).toBe(true);
    const changed = await post(other, 'password_edit', { current_password: m.password, new_password: 'a-new-password-1' });
    expect(changed.statusCode).toBe(200);
    expect((await status(m.c)).unlocked).toBe(false);
    expect((await status(other)).unlocked).toBe(false);
  });

  it('stays locked when a heartbeat or a decrypt read the window just before a concurrent lock', async () => {
    const m = await memberWithVault({ passkey: false });
    const session = m.c.jar.cookies.get('gatehouse_session')!;
    const windows = t.services.vaultWindows;
    for (const use of ['heartbeat', 'decrypt'] as const) {
      expect((await status(m.c)).unlocked).toBe(true);
      // Two requests of one session: the first has read the open window when the second locks it.
      const first = windows.forSession(session, '127.0.0.1');
      expect(await first.isOpenFor(t.services.db, m.userId)).toBe(true);
      await windows.forSession(session, '127.0.0.1').close(t.services.db);
      t.clock.advance(1000);
      if (use === 'heartbeat') expect(await first.heartbeat(t.services.db, m.userId)).toBe(false);
      else expect(await first.unsealFor(t.services.db, m.userId)).toBeNull();
      expect(await windows.forSession(session, '127.0.0.1').isOpenFor(t.services.db, m.userId)).toBe(false);
      expect((await status(m.c)).unlocked).toBe(false);
      expect((await post(m.c, 'vault_unlock_recovery', { password: m.password, code: m.codes[use === 'heartbeat' ? 2 : 3] })).statusCode).toBe(200);
    }
  });

  it('a session that signed out leaves nothing open', async () => {
    const m = await memberWithVault({ passkey: false });
    const home = await m.c.get('/');
    const stale = new Map(m.c.jar.cookies);
    expect((await m.c.postForm('/logout', { form_token: m.c.formToken(home.body, '/logout') })).statusCode).toBe(303);
    const replay = webClient(t);
    for (const [k, v] of stale) replay.jar.cookies.set(k, v);
    const res = await post(replay, 'vault_status');
    expect(res.statusCode).not.toBe(200);
  });
});

describe('the unlocker floor', () => {
  it('refuses revoking the only passkey unlocker when fewer than 3 codes are left', async () => {
    const m = await memberWithVault();
    for (const code of m.codes.slice(0, 8)) {
      await post(m.c, 'vault_lock');
      expect((await post(m.c, 'vault_unlock_recovery', { password: m.password, code })).statusCode).toBe(200);
    }
    const s = await status(m.c);
    expect([s.recovery_codes_left, s.regenerate_recommended]).toEqual([2, true]);
    const needsStepUp = await post(m.c, 'vault_regenerate_codes');
    expect(needsStepUp.json.data.reason).toBe('stepup_required');
    await stepUp(m.c, m.auth);
    const refused = await post(m.c, 'passkey_revoke', { passkey_id: m.passkeyId });
    expect([refused.statusCode, refused.json.errortype, refused.json.data.reason]).toEqual([422, 'ActionError', 'unlocker_floor']);
    const regenerated = await post(m.c, 'vault_regenerate_codes');
    expect(regenerated.statusCode).toBe(200);
    expect(regenerated.json.data).toMatchObject({ recovery_codes_left: 10, regenerate_recommended: false });
    await post(m.c, 'vault_lock');
    expect((await post(m.c, 'vault_unlock_recovery', { password: m.password, code: m.codes[9] })).json.data.reason).toBe('unlock_failed');
    expect((await post(m.c, 'vault_unlock_recovery', { password: m.password, code: regenerated.json.data.recovery_codes[0] })).statusCode).toBe(200);
    expect((await post(m.c, 'passkey_revoke', { passkey_id: m.passkeyId })).statusCode).toBe(200);
  });

  it('adds a second PRF passkey as an unlocker while unlocked', async () => {
    const m = await memberWithVault();
    await stepUp(m.c, m.auth);
    const second = new SoftAuthenticator(ORIGIN, RP_ID, { prf: true });
    const secondId = await enrollPasskey(m.c, second);
    await post(m.c, 'vault_lock');
    expect((await post(m.c, 'vault_add_passkey_options')).json.data.reason).toBe('vault_locked');
    expect((await unlockByPasskey(m.c, m.auth)).statusCode).toBe(200);
    const options = await post(m.c, 'vault_add_passkey_options');
    expect(options.statusCode).toBe(200);
    expect(options.json.data.allowCredentials.map((c: { id: string }) => c.id)).toEqual([second.credentials[0]!.id]);
    expect(options.json.data.extensions.prf.eval.first).toBe(PRF_SALT.toString('base64url'));
    const added = await post(m.c, 'vault_add_passkey_verify', { ...second.assert(options.json.data), prf_output: prfOf(second.credentials[0]!.id) });
    expect(added.statusCode).toBe(200);
    expect(added.json.data.unlockers.filter((u: { type: string }) => u.type === 'passkey').map((u: { passkey_id: number }) => u.passkey_id)).toEqual([m.passkeyId, secondId]);
    await post(m.c, 'vault_lock');
    const opts = await post(m.c, 'vault_unlock_options');
    const res = await post(m.c, 'vault_unlock_passkey', { ...second.assert(opts.json.data, second.credentials[0]), prf_output: prfOf(second.credentials[0]!.id) });
    expect(res.statusCode).toBe(200);
  });
});

describe('sealed replays', () => {
  it('stores setup codes sealed, replays them while unlocked and answers 409 sealed_replay_locked while locked', async () => {
    const u = await t.createUser();
    const c = await signIn(t, u.email, u.password);
    await post(c, 'vault_setup_options', { password: u.password });
    const key = { 'idempotency-key': 'vault-setup-1' };
    const first = await post(c, 'vault_setup_verify', { acknowledge_loss: true }, key);
    expect(first.statusCode).toBe(200);
    const codes = first.json.data.recovery_codes as string[];
    const stored = await t.services.db.selectFrom('aik_api_idempotency_keys').select('aik_body').where('aik_action', '=', 'vault_setup_verify').execute();
    for (const row of stored) for (const code of codes) expect(row.aik_body).not.toContain(code);
    const replay = await post(c, 'vault_setup_verify', { acknowledge_loss: true }, key);
    expect(replay.statusCode).toBe(200);
    expect(replay.headers['idempotency-replayed']).toBe('true');
    expect(replay.json.data.recovery_codes).toEqual(codes);
    await post(c, 'vault_lock');
    const locked = await post(c, 'vault_setup_verify', { acknowledge_loss: true }, key);
    expect([locked.statusCode, locked.json.errortype, locked.json.data.reason]).toEqual([409, 'ActionError', 'sealed_replay_locked']);
    // Not repeated: still one vault with its first ten codes.
    expect((await status(c)).recovery_codes_left).toBe(10);
  });
});

describe('rotation', () => {
  it('rotates: sealed content stays readable, old codes retire, and an interrupted rotation re-runs to completion', async () => {
    const m = await memberWithVault({ passkey: false });
    // A stand-in consumer: one sealed record, re-sealed on rotation.
    const vault = (await vaultOf(t.services.db, m.userId))!;
    const record = { table: 'test_notes', id: 1, ownerUserId: m.userId, sealedKey: '' };
    const { contentKey, sealedKey } = newContentKey(vault, record);
    record.sealedKey = sealedKey;
    const values = { body: sealField(contentKey, record, 'body', 'the sealed note') };
    let failOnce = true;
    const unregister = addForTest(t.services.vaultParts.resealers, async (_db, input) => {
      if (input.userId !== m.userId) return;
      if (failOnce) {
        failOnce = false;
        throw new Error('interrupted');
      }
      record.sealedKey = resealContentKey(record, input.oldSecretKey, input.newPublicKey)!;
    });
    try {
      const noCeremony = await post(m.c, 'vault_rotate_verify', { password: m.password });
      expect(noCeremony.json.data.reason).toBe('no_ceremony');
      expect((await post(m.c, 'vault_rotate_options')).statusCode).toBe(200);
      const interrupted = await post(m.c, 'vault_rotate_verify', { password: m.password });
      expect(interrupted.statusCode).toBe(500);
      expect((await status(m.c)).key_generation).toBe(1);
      await post(m.c, 'vault_lock');
      expect((await post(m.c, 'vault_unlock_recovery', { password: m.password, code: m.codes[0] })).statusCode).toBe(200);
      expect((await post(m.c, 'vault_rotate_options')).statusCode).toBe(200);
      const rotated = await post(m.c, 'vault_rotate_verify', { password: m.password });
      expect(rotated.statusCode).toBe(200);
      expect(rotated.json.data).toMatchObject({ key_generation: 2, unlocked: true, recovery_codes_left: 10 });
      // A window handle lives for one request: each read takes a fresh one, as each request does.
      const reader = (userId: number) => ({ db: t.services.db, window: t.services.vaultWindows.forSession(m.c.jar.cookies.get('gatehouse_session')!, '127.0.0.1'), userId });
      expect(await read(record, values, ['body'], reader(m.userId))).toEqual({ body: 'the sealed note', content_locked: false });
      // Another user, or no window at all, reads the record locked: nulls, never an error.
      expect(await read(record, values, ['body'], reader(m.userId + 1))).toEqual({ body: null, content_locked: true });
      expect(await read(record, values, ['body'], { db: t.services.db, window: null, userId: m.userId })).toEqual({ body: null, content_locked: true });
      await post(m.c, 'vault_lock');
      expect(await read(record, values, ['body'], reader(m.userId))).toEqual({ body: null, content_locked: true });
      expect((await post(m.c, 'vault_unlock_recovery', { password: m.password, code: m.codes[1] })).json.data.reason).toBe('unlock_failed');
      expect((await post(m.c, 'vault_unlock_recovery', { password: m.password, code: rotated.json.data.recovery_codes[0] })).statusCode).toBe(200);
      const after = (await vaultOf(t.services.db, m.userId))!;
      expect(after.publicKey.equals(vault.publicKey)).toBe(false);
    } finally {
      unregister();
    }
  });

  it('rotates with the passkey that unlocks the vault and wraps the new generation under it', async () => {
    const m = await memberWithVault();
    const options = await post(m.c, 'vault_rotate_options');
    const rotated = await post(m.c, 'vault_rotate_verify', { ...m.auth.assert(options.json.data), prf_output: prfOf(m.auth.credentials[0]!.id) });
    expect(rotated.statusCode).toBe(200);
    expect(rotated.json.data.unlockers.map((u: { type: string }) => u.type)).toEqual(['passkey', 'recovery']);
    await post(m.c, 'vault_lock');
    expect((await unlockByPasskey(m.c, m.auth)).json.data).toMatchObject({ unlocked: true, key_generation: 2 });
  });

  it('keeps only the passkey used for the rotation: another passkey unlocker must be added again', async () => {
    const m = await memberWithVault();
    await stepUp(m.c, m.auth);
    const second = new SoftAuthenticator(ORIGIN, RP_ID, { prf: true });
    const secondId = await enrollPasskey(m.c, second);
    const addOptions = await post(m.c, 'vault_add_passkey_options');
    expect((await post(m.c, 'vault_add_passkey_verify', { ...second.assert(addOptions.json.data), prf_output: prfOf(second.credentials[0]!.id) })).statusCode).toBe(200);
    expect((await status(m.c)).unlockers.filter((u: { type: string }) => u.type === 'passkey')).toHaveLength(2);

    const options = await post(m.c, 'vault_rotate_options');
    const rotated = await post(m.c, 'vault_rotate_verify', { ...second.assert(options.json.data, second.credentials[0]), prf_output: prfOf(second.credentials[0]!.id) });
    expect(rotated.statusCode).toBe(200);
    expect(rotated.json.data.unlockers.filter((u: { type: string }) => u.type === 'passkey').map((u: { passkey_id: number }) => u.passkey_id)).toEqual([secondId]);
    const live = await t.services.db
      .selectFrom('uew_user_encryption_wrappings')
      .select(['uew_type', 'uew_pky_passkey_id', 'uew_generation'])
      .where('uew_uev_user_encryption_vault_id', '=', (await vaultOf(t.services.db, m.userId))!.id)
      .where('uew_delete_time', 'is', null)
      .execute();
    expect(live.every((w) => w.uew_generation === 2)).toBe(true);
    expect(live.filter((w) => w.uew_type === 'passkey').map((w) => w.uew_pky_passkey_id)).toEqual([secondId]);

    await post(m.c, 'vault_lock');
    // The first passkey is no longer offered, and its PRF output opens nothing.
    const unlockOptions = await post(m.c, 'vault_unlock_options');
    expect(unlockOptions.json.data.allowCredentials.map((c: { id: string }) => c.id)).toEqual([second.credentials[0]!.id]);
    const first = await post(m.c, 'vault_unlock_passkey', { ...m.auth.assert({ ...unlockOptions.json.data, allowCredentials: [] }), prf_output: prfOf(m.auth.credentials[0]!.id) });
    expect([first.statusCode, first.json.errortype]).toEqual([422, 'ActionError']);
    expect((await status(m.c)).unlocked).toBe(false);
    const byCode = await post(m.c, 'vault_unlock_recovery', { password: m.password, code: m.codes[0] });
    expect(byCode.json.data.reason).toBe('unlock_failed');
    const secondOptions = await post(m.c, 'vault_unlock_options');
    const ok = await post(m.c, 'vault_unlock_passkey', { ...second.assert(secondOptions.json.data, second.credentials[0]), prf_output: prfOf(second.credentials[0]!.id) });
    expect(ok.json.data).toMatchObject({ unlocked: true, key_generation: 2 });
  });
});

describe('rotation is serialised per vault, and every sealing writer seals to the current key', () => {
  it('two rotations from two sessions at once: the second waits and is refused (vault_rotated); all opens with the first one\'s key, and its new codes unlock', async () => {
    const m = await memberWithVault({ passkey: false, passphrase: 'a long vault passphrase' });
    const other = await signIn(t, m.email, m.password);
    expect((await post(other, 'vault_unlock_passphrase', { password: m.password, passphrase: 'a long vault passphrase' })).statusCode).toBe(200);
    // A stand-in consumer's sealed record, re-sealed by each rotation that gets that far.
    const vault = (await vaultOf(t.services.db, m.userId))!;
    const record = { table: 'test_notes', id: 2, ownerUserId: m.userId, sealedKey: '' };
    const { contentKey, sealedKey } = newContentKey(vault, record);
    record.sealedKey = sealedKey;
    const values = { body: sealField(contentKey, record, 'body', 'the note of two rotations') };
    const unregister = addForTest(t.services.vaultParts.resealers, async (_db, input) => {
      if (input.userId === m.userId) record.sealedKey = resealContentKey(record, input.oldSecretKey, input.newPublicKey) ?? 'lost';
    });
    const held = holdRotation(t.services, m.userId);
    let codes: string[];
    try {
      expect((await post(m.c, 'vault_rotate_options')).statusCode).toBe(200);
      expect((await post(other, 'vault_rotate_options')).statusCode).toBe(200);
      const first = post(m.c, 'vault_rotate_verify', { password: m.password });
      await held.reached;
      // The first rotation holds its transaction open: the second one comes now.
      const second = post(other, 'vault_rotate_verify', { password: m.password });
      await settledOrWaiting(t.services.db, [second]);
      held.release();
      const [a, b] = await Promise.all([first, second]);
      expect([a.statusCode, a.json.data.key_generation]).toEqual([200, 2]);
      expect([b.statusCode, b.json.errortype, b.json.data.reason]).toEqual([422, 'ActionError', 'vault_rotated']);
      codes = a.json.data.recovery_codes;
    } finally {
      held.remove();
      unregister();
    }
    expect((await vaultOf(t.services.db, m.userId))!.generation).toBe(2);
    const reader = { db: t.services.db, window: t.services.vaultWindows.forSession(m.c.jar.cookies.get('gatehouse_session')!, '127.0.0.1'), userId: m.userId };
    expect(await read(record, values, ['body'], reader)).toEqual({ body: 'the note of two rotations', content_locked: false });
    // The refused session's window was of the retired key; both sessions unlock with the first rotation's codes.
    expect((await status(other)).unlocked).toBe(false);
    for (const c of [m.c, other]) {
      await post(c, 'vault_lock');
      const res = await post(c, 'vault_unlock_recovery', { password: m.password, code: codes.pop()! });
      expect([res.statusCode, res.json.data.key_generation]).toEqual([200, 2]);
    }
  });

  it('an answer stored sealed for an Idempotency-Key replay is re-sealed by the rotation and still replays', async () => {
    const m = await memberWithVault({ passkey: false });
    const key = { 'idempotency-key': 'regenerate-before-rotation' };
    const first = await post(m.c, 'vault_regenerate_codes', { password: m.password }, key);
    expect(first.statusCode).toBe(200);
    expect((await post(m.c, 'vault_rotate_options')).statusCode).toBe(200);
    expect((await post(m.c, 'vault_rotate_verify', { password: m.password })).statusCode).toBe(200);
    const replay = await post(m.c, 'vault_regenerate_codes', { password: m.password }, key);
    expect([replay.statusCode, replay.headers['idempotency-replayed']]).toEqual([200, 'true']);
    expect(replay.json.data.recovery_codes).toEqual(first.json.data.recovery_codes);
  });
});

describe('retired unlockers keep no copy of the vault key', () => {
  const wrapsOf = async (userId: number) => {
    const vault = (await vaultOf(t.services.db, userId))!;
    return t.services.db
      .selectFrom('uew_user_encryption_wrappings')
      .selectAll()
      .where('uew_uev_user_encryption_vault_id', '=', vault.id)
      .orderBy('uew_user_encryption_wrapping_id')
      .execute();
  };

  it('a spent or regenerated code, a replaced or removed passphrase, a revoked passkey and a rotated-out generation: their wraps are destroyed', async () => {
    const m = await memberWithVault({ passphrase: 'a long vault passphrase' });
    await post(m.c, 'vault_lock');
    expect((await post(m.c, 'vault_unlock_recovery', { password: m.password, code: m.codes[0] })).statusCode).toBe(200);
    await stepUp(m.c, m.auth);
    const regenerated = await post(m.c, 'vault_regenerate_codes');
    expect(regenerated.statusCode).toBe(200);
    expect((await post(m.c, 'vault_passphrase_enroll', { passphrase: 'a replacement passphrase' })).statusCode).toBe(200);
    expect((await post(m.c, 'vault_passphrase_remove')).statusCode).toBe(200);
    const second = new SoftAuthenticator(ORIGIN, RP_ID, { prf: true });
    const secondId = await enrollPasskey(m.c, second);
    const options = await post(m.c, 'vault_add_passkey_options');
    expect((await post(m.c, 'vault_add_passkey_verify', { ...second.assert(options.json.data), prf_output: prfOf(second.credentials[0]!.id) })).statusCode).toBe(200);
    expect((await post(m.c, 'passkey_revoke', { passkey_id: secondId })).statusCode).toBe(200);

    const rows = await wrapsOf(m.userId);
    const retired = rows.filter((r) => r.uew_delete_time !== null || r.uew_used_time !== null);
    // 10 first codes (one of them spent), 2 passphrases, the revoked passkey's wrap.
    expect(retired.map((r) => r.uew_type).sort()).toEqual([...Array(10).fill('recovery'), 'passkey', 'passphrase', 'passphrase'].sort());
    expect(retired.find((r) => r.uew_type === 'passkey')!.uew_pky_passkey_id).toBe(secondId);
    for (const r of retired) expect([r.uew_wrapped_key, r.uew_salt]).toEqual(['', '']);
    const live = rows.filter((r) => r.uew_delete_time === null && r.uew_used_time === null);
    expect(live.map((r) => r.uew_type)).toEqual(['passkey', ...Array(10).fill('recovery')]);
    for (const r of live) expect(r.uew_wrapped_key.length).toBeGreaterThan(40);

    // None of them opens the vault any more.
    await post(m.c, 'vault_lock');
    for (const code of m.codes.slice(0, 2)) expect((await post(m.c, 'vault_unlock_recovery', { password: m.password, code })).json.data.reason).toBe('unlock_failed');
    expect((await post(m.c, 'vault_unlock_passphrase', { password: m.password, passphrase: 'a replacement passphrase' })).json.data.reason).toBe('no_passphrase');
    expect((await post(m.c, 'vault_unlock_options')).json.data.allowCredentials.map((c: { id: string }) => c.id)).toEqual([m.auth.credentials[0]!.id]);

    // A rotation destroys every wrap of the generation it retires.
    expect((await unlockByPasskey(m.c, m.auth)).statusCode).toBe(200);
    const rotateOptions = await post(m.c, 'vault_rotate_options');
    expect((await post(m.c, 'vault_rotate_verify', { ...m.auth.assert(rotateOptions.json.data), prf_output: prfOf(m.auth.credentials[0]!.id) })).statusCode).toBe(200);
    const after = await wrapsOf(m.userId);
    for (const r of after.filter((w) => w.uew_generation === 1)) expect([r.uew_delete_time !== null, r.uew_wrapped_key, r.uew_salt]).toEqual([true, '', '']);
    expect(after.filter((w) => w.uew_generation === 2 && w.uew_wrapped_key !== '').length).toBe(11);
  });

  it('migration 0029 destroys the wraps retired before it, and retires the wraps of passkeys revoked before it', async () => {
    const m = await memberWithVault();
    const db = t.services.db;
    const rows = await wrapsOf(m.userId);
    const [code1, code2] = rows.filter((r) => r.uew_type === 'recovery');
    // What the code before this change left behind: retired and spent wraps with their keys, a revoked
    // passkey's live wrap.
    await db.updateTable('uew_user_encryption_wrappings').set({ uew_delete_time: t.clock.now() }).where('uew_user_encryption_wrapping_id', '=', code1!.uew_user_encryption_wrapping_id).execute();
    await db.updateTable('uew_user_encryption_wrappings').set({ uew_used_time: t.clock.now() }).where('uew_user_encryption_wrapping_id', '=', code2!.uew_user_encryption_wrapping_id).execute();
    await db.updateTable('pky_passkeys').set({ pky_delete_time: t.clock.now() }).where('pky_passkey_id', '=', m.passkeyId!).execute();
    await destroyRetiredWraps(db);
    const after = await wrapsOf(m.userId);
    const byId = new Map(after.map((r) => [r.uew_user_encryption_wrapping_id, r]));
    for (const id of [code1!.uew_user_encryption_wrapping_id, code2!.uew_user_encryption_wrapping_id]) expect([byId.get(id)!.uew_wrapped_key, byId.get(id)!.uew_salt]).toEqual(['', '']);
    const passkeyWrap = after.find((r) => r.uew_type === 'passkey')!;
    expect([passkeyWrap.uew_delete_time !== null, passkeyWrap.uew_wrapped_key]).toEqual([true, '']);
    // The other eight codes are untouched.
    expect(after.filter((r) => r.uew_type === 'recovery' && r.uew_wrapped_key !== '').length).toBe(8);
  });
});

describe('key material', () => {
  it('never stores codes, PRF outputs or passphrases in the clear', async () => {
    const m = await memberWithVault({ passphrase: 'a long vault passphrase' });
    const prf = prfOf(m.auth.credentials[0]!.id);
    const tables = ['uev_user_encryption_vaults', 'uew_user_encryption_wrappings', 'uvw_vault_windows', 'aik_api_idempotency_keys', 'wss_web_sessions', 'rql_request_logs'] as const;
    let dump = '';
    for (const table of tables) dump += JSON.stringify(await t.services.db.selectFrom(table).selectAll().execute());
    const store = t.services.vaultWindows.store;
    if (store instanceof RedisVaultWindowStore) {
      const redis = new Redis(process.env.REDIS_URL!);
      for (const key of await redis.keys(`${store.prefix}*`)) dump += key + (await redis.get(key));
      redis.disconnect();
    }
    // The vault's secret key, as the open window gives it to this session's requests.
    const window = t.services.vaultWindows.forSession(m.c.jar.cookies.get('gatehouse_session')!, '127.0.0.1');
    const secretKey = (await window.unsealFor(t.services.db, m.userId))!.secretKey;
    const secrets = [...m.codes, prf, Buffer.from(prf, 'base64url').toString('hex'), 'a long vault passphrase', secretKey.toString('base64url'), secretKey.toString('hex'), secretKey.toString('base64')];
    for (const secret of secrets) expect(dump).not.toContain(secret);
  });
});

describe('two nodes on one database (and one Redis when REDIS_URL is set)', () => {
  it('a window opened through one node is open through the other for the same session, and for no other session', async () => {
    const shared = t.services.vaultWindows.store;
    const store = shared instanceof RedisVaultWindowStore ? new RedisVaultWindowStore(process.env.REDIS_URL!, t.clock, shared.prefix) : new DatabaseVaultWindowStore(t.clock);
    const services = await createServices({ config: t.services.config, database: t.database, clock: t.clock, rateLimitStore: new MemoryRateLimitStore(), vaultWindowStore: store });
    const app = await buildApp(services);
    await app.ready();
    try {
      const m = await memberWithVault({ passkey: false });
      const other = await signIn(t, m.email, m.password);
      const onNode2 = async (c: WebClient, name: string) => {
        const res = await app.inject({ method: 'POST', url: action(name), headers: { cookie: c.jar.header(), 'x-service-csrf': c.csrf() }, payload: {}, remoteAddress: '127.0.0.1' });
        return res.json();
      };
      expect((await onNode2(m.c, 'vault_status')).data.unlocked).toBe(true);
      expect((await onNode2(other, 'vault_status')).data.unlocked).toBe(false);
      expect((await onNode2(m.c, 'vault_lock')).data.unlocked).toBe(false);
      expect((await status(m.c)).unlocked).toBe(false);
    } finally {
      await app.close();
      await services.close();
    }
  });
});
