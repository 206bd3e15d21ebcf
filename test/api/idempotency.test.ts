import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { defineAction } from '../../src/actions/define.js';
import { EXECUTING_TIMEOUT_MS } from '../../src/actions/idempotency.js';
import { actionRegistry } from '../../src/actions/index.js';
import { businessError, validationError } from '../../src/http/errors.js';
import { sha256Hex } from '../../src/lib/crypto.js';
import { onPostgres } from '../helpers/database.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

const runs = { counter: 0, refuse: 0, crash: 0, slow: 0, open: 0, checked: 0, gated: 0, secret: 0 };

/** idem_gated's logic waits here until the test opens the gate (set per test). */
let gate: { entered: () => void; open: Promise<void> } | null = null;
const issuedSecrets: string[] = [];

const TEST_ACTIONS = [
  defineAction({
    name: 'idem_counter',
    description: 'Counts its runs',
    mutates: true,
    input: { amount: { type: 'int', required: true, min: 1 } },
    async run({ input }) {
      runs.counter += 1;
      return { data: { run: runs.counter, amount: input.amount }, message: 'counted' };
    },
  }),
  defineAction({
    name: 'idem_other',
    description: 'Another action, same input',
    mutates: true,
    input: { amount: { type: 'int', required: true } },
    async run() {
      return { data: {} };
    },
  }),
  defineAction({
    name: 'idem_refuse',
    description: 'Refuses after counting',
    mutates: true,
    async run() {
      runs.refuse += 1;
      throw businessError('Invalid state', { run: runs.refuse });
    },
  }),
  defineAction({
    name: 'idem_checked',
    description: 'Validates in its logic, then counts',
    mutates: true,
    input: { amount: { type: 'int', required: true } },
    async run({ input, db }) {
      if (input.amount > 100) throw validationError({ amount: 'is over the limit' });
      runs.checked += 1;
      const row = await db.selectFrom('usr_users').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
      return { data: { run: runs.checked, amount: input.amount, users: Number(row.n) } };
    },
  }),
  defineAction({
    name: 'idem_crash',
    description: 'Fails unexpectedly',
    mutates: true,
    async run() {
      runs.crash += 1;
      throw new Error('boom');
    },
  }),
  defineAction({
    name: 'idem_slow',
    description: 'Takes a while',
    mutates: true,
    async run({ db }) {
      runs.slow += 1;
      await new Promise((r) => setTimeout(r, 150));
      const row = await db.selectFrom('usr_users').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
      return { data: { run: runs.slow, users: Number(row.n) } };
    },
  }),
  defineAction({
    name: 'idem_gated',
    description: 'Waits for the test to let it finish',
    mutates: false,
    async run() {
      runs.gated += 1;
      const g = gate!;
      g.entered();
      await g.open;
      return { data: { run: runs.gated } };
    },
  }),
  defineAction({
    name: 'idem_secret',
    description: 'Answers with a secret shown once',
    mutates: true,
    answer_holds_secret: true,
    async run() {
      runs.secret += 1;
      const secret = `secret-${runs.secret}-${Math.random().toString(36).slice(2)}`;
      issuedSecrets.push(secret);
      return { data: { token: secret }, message: 'Copy it now' };
    },
  }),
  defineAction({
    name: 'idem_open',
    description: 'Sessionless',
    requires_session: false,
    mutates: true,
    async run() {
      runs.open += 1;
      return { data: { run: runs.open } };
    },
  }),
];

let t: TestApp;
let caller: Awaited<ReturnType<TestApp['keyHeaders']>>;
beforeAll(async () => {
  for (const a of TEST_ACTIONS) actionRegistry.register(a);
  t = await createTestApp();
  caller = await t.keyHeaders();
});
afterAll(async () => {
  for (const a of TEST_ACTIONS) actionRegistry.unregister(a.name);
  await t.close();
});
beforeEach(() => {
  for (const k of Object.keys(runs) as Array<keyof typeof runs>) runs[k] = 0;
});

let seq = 0;
const freshKey = () => `idem-${++seq}-${Math.random().toString(36).slice(2)}`;

function post(name: string, payload: unknown, key: string | null, headers: Record<string, string> = caller.headers) {
  return t.request({
    method: 'POST',
    url: `/api/v1/action/${name}`,
    payload: typeof payload === 'string' ? payload : (payload as Record<string, unknown>),
    headers: { ...headers, ...(key === null ? {} : { 'idempotency-key': key }), 'content-type': 'application/json' },
  });
}

const records = () => t.services.db.selectFrom('aik_api_idempotency_keys').selectAll().execute();

describe('Idempotency-Key on POST /action/*', () => {
  it('refuses a body nested deeper than 100 levels with a 422 instead of overflowing the stack into a 500 (found by the fuzzer)', async () => {
    const deep = '{"a":'.repeat(3000) + '1' + '}'.repeat(3000);
    const res = await post('idem_counter', deep, freshKey());
    expect(res.statusCode).toBe(422);
    expect(res.json).toMatchObject({ errortype: 'ValidationError', validation_errors: { body: 'must not be nested more than 100 levels deep' } });
    expect(runs.counter).toBe(0);
    const shallower = await post('idem_counter', '{"a":'.repeat(50) + '1' + '}'.repeat(50), freshKey());
    expect(shallower.json.validation_errors?.body).toBeUndefined();
  });

  it('replays the stored response, byte for byte, without running the logic again', async () => {
    const key = freshKey();
    const first = await post('idem_counter', { amount: 3 }, key);
    expect(first.statusCode).toBe(200);
    expect(first.json).toEqual({ api_version: '1.0', success_message: 'counted', data: { run: 1, amount: 3 } });
    const second = await post('idem_counter', { amount: 3 }, key);
    expect(second.statusCode).toBe(200);
    expect(second.body).toBe(first.body);
    expect(second.headers['idempotency-replayed']).toBe('true');
    expect(runs.counter).toBe(1);
  });

  it('treats the same body with keys in another order as the same request', async () => {
    const key = freshKey();
    await post('idem_counter', '{"amount":2,"note":"x"}', key);
    const again = await post('idem_counter', '{"note":"x","amount":2}', key);
    expect(again.statusCode).toBe(200);
    expect(runs.counter).toBe(1);
  });

  it('stores only the SHA-256 of the key, scoped to the credential, with the state stored', async () => {
    const key = freshKey();
    const res = await post('idem_counter', { amount: 1 }, key);
    const row = (await records()).find((r) => r.aik_key_hash === sha256Hex(key));
    expect(row).toMatchObject({
      aik_scope: `key:${caller.key.apiKeyId}`,
      aik_action: 'idem_counter',
      aik_state: 'stored',
      aik_status: 200,
      aik_body: res.body,
    });
    const everything = JSON.stringify(await records());
    expect(everything).not.toContain(key);
  });

  it('409 ActionError with data.reason idempotency_key_reused for a different body', async () => {
    const key = freshKey();
    await post('idem_counter', { amount: 1 }, key);
    const res = await post('idem_counter', { amount: 2 }, key);
    expect(res.statusCode).toBe(409);
    expect(res.json).toEqual({
      api_version: '1.0',
      errortype: 'ActionError',
      error: 'Idempotency-Key was already used with a different body or action',
      data: { reason: 'idempotency_key_reused' },
    });
    expect(runs.counter).toBe(1);
  });

  it('409 idempotency_key_reused for the same body sent to a different action', async () => {
    const key = freshKey();
    await post('idem_counter', { amount: 1 }, key);
    const res = await post('idem_other', { amount: 1 }, key);
    expect(res.statusCode).toBe(409);
    expect(res.json.data).toEqual({ reason: 'idempotency_key_reused' });
  });

  it('decides the 409 before input validation', async () => {
    const key = freshKey();
    await post('idem_counter', { amount: 1 }, key);
    const res = await post('idem_counter', { amount: 'not a number' }, key);
    expect(res.statusCode).toBe(409);
    expect(res.json.errortype).toBe('ActionError');
    expect(res.json.data.reason).toBe('idempotency_key_reused');
  });

  it('does not claim the key when validation fails', async () => {
    const key = freshKey();
    const invalid = await post('idem_counter', { amount: 0 }, key);
    expect(invalid.statusCode).toBe(422);
    expect(invalid.json.validation_errors).toEqual({ amount: 'must be at least 1' });
    expect((await records()).some((r) => r.aik_key_hash === sha256Hex(key))).toBe(false);
    const valid = await post('idem_counter', { amount: 5 }, key);
    expect(valid.statusCode).toBe(200);
    expect(runs.counter).toBe(1);
  });

  it('does not keep the key when the logic finds the input invalid: the corrected body runs under it', async () => {
    const key = freshKey();
    const invalid = await post('idem_checked', { amount: 500 }, key);
    expect(invalid.statusCode).toBe(422);
    expect(invalid.json).toEqual({ api_version: '1.0', errortype: 'ValidationError', error: 'Input validation failed', data: {}, validation_errors: { amount: 'is over the limit' } });
    expect((await records()).some((r) => r.aik_key_hash === sha256Hex(key))).toBe(false);
    const corrected = await post('idem_checked', { amount: 50 }, key);
    expect(corrected.statusCode).toBe(200);
    expect(corrected.json.data).toMatchObject({ run: 1, amount: 50 });
    const replayed = await post('idem_checked', { amount: 50 }, key);
    expect(replayed.body).toBe(corrected.body);
    expect(runs.checked).toBe(1);
  });

  it('scopes keys per credential: another key may use the same key string', async () => {
    const key = freshKey();
    const other = await t.keyHeaders();
    const a = await post('idem_counter', { amount: 1 }, key);
    const b = await post('idem_counter', { amount: 1 }, key, other.headers);
    expect(a.statusCode).toBe(200);
    expect(b.statusCode).toBe(200);
    expect(b.json.data.run).toBe(2);
    expect(runs.counter).toBe(2);
    const b2 = await post('idem_counter', { amount: 9 }, key, other.headers);
    expect(b2.statusCode).toBe(409);
  });

  it('replays a stored business refusal without running the logic again', async () => {
    const key = freshKey();
    const first = await post('idem_refuse', {}, key);
    expect(first.statusCode).toBe(422);
    expect(first.json).toEqual({ api_version: '1.0', errortype: 'ActionError', error: 'Invalid state', data: { run: 1 } });
    const second = await post('idem_refuse', {}, key);
    expect(second.statusCode).toBe(422);
    expect(second.body).toBe(first.body);
    expect(runs.refuse).toBe(1);
  });

  it('gives the key back after an unexpected failure, so a retry runs', async () => {
    const key = freshKey();
    const first = await post('idem_crash', {}, key);
    expect(first.statusCode).toBe(500);
    expect(first.json.errortype).toBe('TransactionError');
    const second = await post('idem_crash', {}, key);
    expect(second.statusCode).toBe(500);
    expect(runs.crash).toBe(2);
  });

  it('409 while the original is still executing; a claim older than the timeout may be retried', async () => {
    const key = freshKey();
    const now = t.clock.now();
    await t.services.db
      .insertInto('aik_api_idempotency_keys')
      .values({
        aik_scope: `key:${caller.key.apiKeyId}`,
        aik_key_hash: sha256Hex(key),
        aik_fingerprint: (await import('../../src/actions/idempotency.js')).requestFingerprint('idem_counter', { amount: 4 }),
        aik_action: 'idem_counter',
        aik_state: 'executing',
        aik_create_time: now,
        aik_update_time: now,
      })
      .execute();
    const busy = await post('idem_counter', { amount: 4 }, key);
    expect(busy.statusCode).toBe(409);
    expect(busy.json).toEqual({
      api_version: '1.0',
      errortype: 'ActionError',
      error: 'A request with this Idempotency-Key is still executing; retry once it has finished',
      data: { reason: 'idempotency_key_reused', in_progress: true },
    });
    const differentBody = await post('idem_counter', { amount: 5 }, key);
    expect(differentBody.json.data.reason).toBe('idempotency_key_reused');
    expect(runs.counter).toBe(0);

    t.clock.advance(EXECUTING_TIMEOUT_MS + 1000);
    const retried = await post('idem_counter', { amount: 4 }, key);
    expect(retried.statusCode).toBe(200);
    expect(runs.counter).toBe(1);
    const replayed = await post('idem_counter', { amount: 4 }, key);
    expect(replayed.body).toBe(retried.body);
    expect(runs.counter).toBe(1);
  });

  it('a request sent while the original still executes: 409 idempotency_key_reused with in_progress true; afterwards the stored answer replays', async () => {
    const key = freshKey();
    let entered!: () => void;
    const inside = new Promise<void>((r) => (entered = r));
    let release!: () => void;
    gate = { entered, open: new Promise<void>((r) => (release = r)) };
    const original = post('idem_gated', { n: 1 }, key);
    await inside; // the original has claimed the key and is running its logic
    const during = await post('idem_gated', { n: 1 }, key);
    expect(during.statusCode).toBe(409);
    expect(during.json).toEqual({
      api_version: '1.0',
      errortype: 'ActionError',
      error: 'A request with this Idempotency-Key is still executing; retry once it has finished',
      data: { reason: 'idempotency_key_reused', in_progress: true },
    });
    // Another body under the executing key is the plain reuse: no in_progress, retrying cannot help.
    const other = await post('idem_gated', { n: 2 }, key);
    expect([other.statusCode, other.json.data]).toEqual([409, { reason: 'idempotency_key_reused' }]);
    release();
    const first = await original;
    expect([first.statusCode, first.json.data]).toEqual([200, { run: 1 }]);
    const after = await post('idem_gated', { n: 1 }, key);
    expect(after.statusCode).toBe(200);
    expect(after.body).toBe(first.body);
    expect(after.headers['idempotency-replayed']).toBe('true');
    expect(runs.gated).toBe(1);
  });

  it('an answer that holds a secret is stored only as a marker; a retry is refused with 409 and nothing repeats', async () => {
    const key = freshKey();
    const first = await post('idem_secret', {}, key);
    expect(first.statusCode).toBe(200);
    const secret: string = first.json.data.token;
    expect(issuedSecrets).toContain(secret);
    const row = (await records()).find((r) => r.aik_key_hash === sha256Hex(key))!;
    expect(row).toMatchObject({ aik_state: 'stored', aik_status: 200, aik_body: 'secret-answer:v1' });
    expect(JSON.stringify(row)).not.toContain(secret);

    const retry = await post('idem_secret', {}, key);
    expect(retry.statusCode).toBe(409);
    expect(retry.json).toEqual({
      api_version: '1.0',
      errortype: 'ActionError',
      error: 'The answer to this request held a secret shown only once, so it was not kept; the action was not repeated.',
      data: { reason: 'secret_answer_not_kept' },
    });
    expect(retry.body).not.toContain(secret);
    expect(runs.secret).toBe(1);
    // Without a key the action simply runs (nothing is stored).
    expect((await post('idem_secret', {}, null)).statusCode).toBe(200);
    expect(runs.secret).toBe(2);
  });

  it('ignores the header where there is no credential scope (sessionless dispatch)', async () => {
    const key = freshKey();
    await post('idem_open', {}, key, {});
    await post('idem_open', {}, key, {});
    expect(runs.open).toBe(2);
    expect((await records()).some((r) => r.aik_key_hash === sha256Hex(key))).toBe(false);
  });

  it('refuses an over-long key', async () => {
    const res = await post('idem_counter', { amount: 1 }, 'k'.repeat(256));
    expect(res.statusCode).toBe(422);
    expect(res.json.validation_errors).toEqual({ 'Idempotency-Key': 'must be 1 to 255 characters' });
  });

  it(`runs the logic exactly once for 50 concurrent requests with one key${onPostgres ? ' (PostgreSQL)' : ''}`, async () => {
    const key = freshKey();
    const responses = await Promise.all(Array.from({ length: 50 }, () => post('idem_slow', { n: 1 }, key)));
    expect(runs.slow).toBe(1);
    const ok = responses.filter((r) => r.statusCode === 200);
    const busy = responses.filter((r) => r.statusCode === 409);
    expect(ok.length + busy.length).toBe(50);
    expect(ok.length).toBeGreaterThanOrEqual(1);
    expect(new Set(ok.map((r) => r.body)).size).toBe(1);
    for (const r of busy) expect(r.json.data).toEqual({ reason: 'idempotency_key_reused', in_progress: true });
    const after = await post('idem_slow', { n: 1 }, key);
    expect(after.body).toBe(ok[0]!.body);
    expect(runs.slow).toBe(1);
  });
});

describe('purge task', () => {
  it('deletes records older than idempotency_key_retention_hours and keeps younger ones', async () => {
    await t.services.db.deleteFrom('aik_api_idempotency_keys').execute();
    const old = freshKey();
    await post('idem_counter', { amount: 1 }, old);
    t.clock.advance(20 * 3_600_000);
    const young = freshKey();
    await post('idem_counter', { amount: 1 }, young);
    t.clock.advance(5 * 3_600_000);
    const [outcome] = await t.services.scheduler.runNow('purge_idempotency_keys');
    expect(outcome).toEqual({ task: 'purge_idempotency_keys', result: { deleted: 1, retention_hours: 24 } });
    expect((await records()).map((r) => r.aik_key_hash)).toEqual([sha256Hex(young)]);
    // The purged key is unseen again.
    const rerun = await post('idem_counter', { amount: 1 }, old);
    expect(rerun.statusCode).toBe(200);
    expect(runs.counter).toBe(3);
  });
});
