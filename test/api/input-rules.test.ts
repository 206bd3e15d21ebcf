import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as agent from '../../tools/agent/agent.mjs';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { multipartBody } from '../helpers/actions.js';
import { webClient } from '../helpers/browser-session.js';

// One input rule for every surface: a NUL character (\u0000) in any text a client sends is bad input,
// answered in the surface's own vocabulary (actions and the agent channel: 422 ValidationError naming the
// field; CRUD, auth and the website: 400 TransactionError), never a 500 from the database refusing it.
// And CRUD writes take form-urlencoded fields only: any other body is refused, not written as an empty row.

const NUL_MESSAGE = 'must not contain a NUL character (\\u0000)';
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

let t: TestApp;
let server: string;
const dir = mkdtempSync(path.join(os.tmpdir(), 'gh-input-'));
beforeAll(async () => {
  t = await createTestApp({ start: new Date(), activePlugins: ['server_management', 'mailbox'] });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const address = t.app.server.address();
  if (typeof address !== 'object' || !address) throw new Error('not listening');
  server = `http://127.0.0.1:${address.port}`;
});
afterAll(async () => {
  await t.close();
  rmSync(dir, { recursive: true, force: true });
});

const anyDb = () => t.services.db as unknown as Kysely<any>;
const count = async (table: 'pst_posts' | 'usr_users') => Number((await anyDb().selectFrom(table).select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);

describe('a NUL character in any text input is a clear 4xx, never a 500', () => {
  it('agent/join with \\u0000 in claimed_name: 422 ValidationError naming the field, no node made', async () => {
    const identity = agent.loadOrCreateIdentity(path.join(dir, 'nul.json'));
    const refused = await agent.join(server, identity, { name: 'web\u00001' }).catch((e: agent.AgentError) => e);
    expect(refused).toBeInstanceOf(agent.AgentError);
    const res = (refused as agent.AgentError).response as { status: number; json: Record<string, unknown> };
    expect(res.status).toBe(422);
    expect(res.json).toEqual({ api_version: '1.0', errortype: 'ValidationError', error: 'Input validation failed', data: {}, validation_errors: { claimed_name: NUL_MESSAGE } });
    const nodes = await t.services.db.selectFrom('smn_managed_nodes' as never).selectAll().execute().catch(() => []);
    expect(JSON.stringify(nodes)).not.toContain('web\\u00001');
  });

  it('an action body (JSON): 422 ValidationError naming the field, declared or not, and the logic does not run', async () => {
    const { headers, userId } = await t.keyHeaders();
    const declared = await t.request({ method: 'POST', url: '/api/v1/action/account_edit', headers, payload: { usr_first_name: 'Ad\u0000a', usr_last_name: 'L' } });
    expect([declared.statusCode, declared.json.errortype, declared.json.validation_errors]).toEqual([422, 'ValidationError', { usr_first_name: NUL_MESSAGE }]);
    const undeclared = await t.request({ method: 'POST', url: '/api/v1/action/account_edit', headers, payload: { usr_first_name: 'Ada', usr_last_name: 'L', extra: ['ok', 'x\u0000'] } });
    expect([undeclared.statusCode, undeclared.json.validation_errors]).toEqual([422, { 'extra[1]': NUL_MESSAGE }]);
    const inKey = await t.request({ method: 'POST', url: '/api/v1/action/account_edit', headers, payload: { usr_first_name: 'Ada', 'bad\u0000key': 1 } });
    expect([inKey.statusCode, inKey.json.validation_errors]).toEqual([422, { 'bad\\u0000key': NUL_MESSAGE }]);
    const row = await t.services.db.selectFrom('usr_users').select('usr_first_name').where('usr_user_id', '=', userId).executeTakeFirstOrThrow();
    expect(row.usr_first_name).toBe('Test');
  });

  it('an action body (multipart fields and file names): 422 ValidationError', async () => {
    const { headers } = await t.keyHeaders();
    const field = multipartBody({ to: 'a@example.com', subject: 'hi\u0000there', body: 'b' });
    const res = await t.request({ method: 'POST', url: '/api/v1/action/mailbox/send', headers: { ...headers, ...field.headers }, payload: field.payload });
    expect([res.statusCode, res.json.errortype, res.json.validation_errors]).toEqual([422, 'ValidationError', { subject: NUL_MESSAGE }]);
    const file = multipartBody({ to: 'a@example.com', subject: 's', body: 'b' }, [{ filename: 'a\u0000.txt', type: 'text/plain', content: 'x' }]);
    const named = await t.request({ method: 'POST', url: '/api/v1/action/mailbox/send', headers: { ...headers, ...file.headers }, payload: file.payload });
    expect([named.statusCode, named.json.validation_errors]).toEqual([422, { attachments: NUL_MESSAGE }]);
  });

  it('the idempotency 409 still answers before it (the key check comes before validation)', async () => {
    const { userId, email } = await t.createUser();
    const issued = await t.createMachineKey({ userId });
    const headers = { public_key: issued.publicKey, secret_key: issued.secretKey };
    const key = { 'idempotency-key': 'nul-after-409' };
    const first = await t.request({ method: 'POST', url: '/api/v1/action/account_edit', headers: { ...headers, ...key }, payload: { usr_first_name: 'Ada', usr_last_name: 'L', usr_email: email } });
    expect(first.statusCode, first.body).toBe(200);
    const reused = await t.request({ method: 'POST', url: '/api/v1/action/account_edit', headers: { ...headers, ...key }, payload: { usr_first_name: 'A\u0000', usr_last_name: 'L', usr_email: email } });
    expect([reused.statusCode, reused.json.data]).toEqual([409, { reason: 'idempotency_key_reused' }]);
  });

  it('a CRUD form body (POST) and query fields (PUT, collection filters): 400 TransactionError, nothing written', async () => {
    const staff = await t.staffHeaders();
    const before = await count('pst_posts');
    const post = await t.request({ method: 'POST', url: '/api/v1/Post', headers: { ...staff.headers, ...FORM }, payload: 'pst_title=a%00b&pst_body=x' });
    expect([post.statusCode, post.json]).toEqual([400, { api_version: '1.0', errortype: 'TransactionError', error: `Input validation failed: pst_title ${NUL_MESSAGE}`, data: {} }]);
    expect(await count('pst_posts')).toBe(before);

    const made = await t.request({ method: 'POST', url: '/api/v1/Post', headers: { ...staff.headers, ...FORM }, payload: 'pst_title=fine' });
    expect(made.statusCode).toBe(200);
    const id = made.json.data.pst_post_id;
    const put = await t.request({ method: 'PUT', url: `/api/v1/Post/${id}?pst_title=x%00y`, headers: staff.headers });
    expect([put.statusCode, put.json.errortype, put.json.error]).toEqual([400, 'TransactionError', `Input validation failed: pst_title ${NUL_MESSAGE}`]);
    const stored = await anyDb().selectFrom('pst_posts').select('pst_title').where('pst_post_id', '=', id).executeTakeFirstOrThrow();
    expect(stored.pst_title).toBe('fine');

    const list = await t.request({ method: 'GET', url: '/api/v1/Posts?max_visible_tier_level=%00', headers: staff.headers });
    expect([list.statusCode, list.json.error]).toEqual([400, `Input validation failed: max_visible_tier_level ${NUL_MESSAGE}`]);
    const item = await t.request({ method: 'GET', url: '/api/v1/Post/%00', headers: staff.headers });
    expect([item.statusCode, item.json.errortype, item.json.error]).toEqual([400, 'TransactionError', `Input validation failed: id ${NUL_MESSAGE}`]);
  });

  it('auth endpoints (login JSON and form, device link): 400 TransactionError', async () => {
    const { email, password } = await t.createUser();
    const json = await t.request({ method: 'POST', url: '/api/v1/auth/login', payload: { email: `${email}\u0000`, password } });
    expect([json.statusCode, json.json.errortype, json.json.error]).toEqual([400, 'TransactionError', `Input validation failed: email ${NUL_MESSAGE}`]);
    const form = await t.request({ method: 'POST', url: '/api/v1/auth/login', headers: FORM, payload: `email=${encodeURIComponent(email)}&password=pw%00` });
    expect([form.statusCode, form.json.error]).toEqual([400, `Input validation failed: password ${NUL_MESSAGE}`]);
    const link = await t.request({ method: 'POST', url: '/api/v1/auth/device_link', payload: { device_name: 'Lap\u0000top', platform: 'linux' } });
    expect([link.statusCode, link.json.error]).toEqual([400, `Input validation failed: device_name ${NUL_MESSAGE}`]);
    const poll = await t.request({ method: 'GET', url: '/api/v1/auth/device_link/ab%00cd' });
    expect([poll.statusCode, poll.json.errortype]).toEqual([400, 'TransactionError']);
  });

  it('a form query (GET /form/*): 422 ValidationError', async () => {
    const res = await t.request({ method: 'GET', url: '/api/v1/form/password_reset_2?act_code=%00' });
    expect([res.statusCode, res.json.errortype, res.json.validation_errors]).toEqual([422, 'ValidationError', { act_code: NUL_MESSAGE }]);
  });

  it('website forms: a 400 page', async () => {
    const c = webClient(t);
    const res = await c.postForm('/login', { email: 'a\u0000@example.com', password: 'x' });
    expect(res.statusCode).toBe(400);
    expect(res.body).toContain('must not contain a NUL character');
  });
});

describe('CRUD writes take form-urlencoded fields only', () => {
  it.each([
    ['text/plain', 'pst_title=plain'],
    ['application/json', JSON.stringify({ pst_title: 'json' })],
    ['application/xml', '<pst_title>x</pst_title>'],
    ['application/octet-stream', 'pst_title=bytes'],
  ])('POST with a %s body: 400 TransactionError, no row', async (type, body) => {
    const staff = await t.staffHeaders();
    const before = await count('pst_posts');
    const res = await t.request({ method: 'POST', url: '/api/v1/Post', headers: { ...staff.headers, 'content-type': type }, payload: body });
    expect([res.statusCode, res.json]).toEqual([
      400,
      { api_version: '1.0', errortype: 'TransactionError', error: 'CRUD writes take application/x-www-form-urlencoded fields (PUT: as query string parameters); this body is not a form', data: {} },
    ]);
    expect(await count('pst_posts')).toBe(before);
  });

  it('POST with a multipart body: 400, no row', async () => {
    const staff = await t.staffHeaders();
    const before = await count('pst_posts');
    const body = multipartBody({ pst_title: 'multi' });
    const res = await t.request({ method: 'POST', url: '/api/v1/Post', headers: { ...staff.headers, ...body.headers }, payload: body.payload });
    expect([res.statusCode, res.json.errortype]).toEqual([400, 'TransactionError']);
    expect(await count('pst_posts')).toBe(before);
  });

  it('PUT with a non-form body: 400, the row unchanged; a form POST and a bodiless PUT still write', async () => {
    const staff = await t.staffHeaders();
    const made = await t.request({ method: 'POST', url: '/api/v1/Post', headers: { ...staff.headers, ...FORM }, payload: 'pst_title=kept' });
    expect([made.statusCode, made.json.data.pst_title]).toEqual([200, 'kept']);
    const id = made.json.data.pst_post_id;
    const res = await t.request({ method: 'PUT', url: `/api/v1/Post/${id}?pst_title=changed`, headers: { ...staff.headers, 'content-type': 'text/plain' }, payload: 'pst_title=changed' });
    expect([res.statusCode, res.json.errortype]).toEqual([400, 'TransactionError']);
    const stored = await anyDb().selectFrom('pst_posts').select('pst_title').where('pst_post_id', '=', id).executeTakeFirstOrThrow();
    expect(stored.pst_title).toBe('kept');
    const ok = await t.request({ method: 'PUT', url: `/api/v1/Post/${id}?pst_title=changed`, headers: staff.headers });
    expect([ok.statusCode, ok.json.data.pst_title]).toEqual([200, 'changed']);
  });

  it('the class and the credential are checked first: 404 for an unknown class, 400 AuthenticationError without key headers', async () => {
    expect((await t.request({ method: 'POST', url: '/api/v1/Nope', headers: { 'content-type': 'text/plain' }, payload: 'x' })).statusCode).toBe(404);
    const anon = await t.request({ method: 'POST', url: '/api/v1/Post', headers: { 'content-type': 'text/plain' }, payload: 'x' });
    expect([anon.statusCode, anon.json.errortype]).toEqual([400, 'AuthenticationError']); // missing key headers
  });
});
