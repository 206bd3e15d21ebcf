import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatehouseClient, GatehouseError } from '../../clients/typescript/src/index.js';
import { example } from '../../clients/typescript/examples/basic.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

const run = promisify(execFile);
let t: TestApp;
let baseUrl: string;
let member: { email: string; password: string; userId: number };

beforeAll(async () => {
  t = await createTestApp();
  baseUrl = await t.app.listen({ port: 0, host: '127.0.0.1' });
  member = await t.createUser({ firstName: 'Ada', lastName: 'Client' });
});
afterAll(async () => {
  await t?.close();
});

describe('the generated TypeScript client', () => {
  it('compiles with its example and its type checks (tsc)', async () => {
    await run(process.execPath, [path.resolve('node_modules/typescript/bin/tsc'), '-p', 'clients/typescript/tsconfig.json'], { timeout: 120_000 });
  }, 130_000);

  it('is generated from a running server by the script (npm run client --url)', async () => {
    const out = await mkdtemp(path.join(tmpdir(), 'gatehouse-client-'));
    try {
      await run(process.execPath, ['scripts/generate-client.mjs', '--url', baseUrl, '--out', out], { timeout: 60_000 });
      const schema = await readFile(path.join(out, 'schema.ts'), 'utf8');
      const actions = Object.keys((await t.request({ method: 'GET', url: '/api/v1/actions' })).json.data);
      for (const name of actions) expect(schema, name).toContain(`"/action/${name}": {`);
      expect(schema).toContain('"/drive_upload/{token}": {');
      const doc = JSON.parse(await readFile(path.join(out, 'openapi.json'), 'utf8'));
      expect(doc.openapi).toBe('3.1.0');
    } finally {
      await rm(out, { recursive: true, force: true });
    }
  }, 70_000);

  it('calls the running server: sign-in, session, a collection read, action refusals as typed errors', async () => {
    const client = new GatehouseClient({ baseUrl });
    const login = await client.login(member.email, member.password, 'client test');
    expect(login.public_key).toMatch(/\S/);
    expect(login.user.user_id).toBe(member.userId);
    const me = await client.get('/auth/session');
    expect(me).toMatchObject({ user_id: member.userId, email: member.email });
    const page = await client.call('get', '/Users', { query: { numperpage: 2 } });
    expect(page).toMatchObject({ api_version: '1.0', num_results: 1, page: 0, numperpage: 2 });
    expect(page.data[0]!.usr_user_id).toBe(member.userId);

    const refused = await client.action('event_withdraw', { evr_event_registrant_id: 1, confirm: false }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(GatehouseError);
    expect(refused).toMatchObject({ status: 422, errortype: 'ValidationError', validationErrors: { confirm: 'must be true to withdraw' } });

    const anonymous = new GatehouseClient({ baseUrl });
    await expect(anonymous.get('/auth/session')).rejects.toMatchObject({ status: 400, errortype: 'AuthenticationError' });
  });

  it('runs the example against the server', async () => {
    const lines = await example(baseUrl, member.email, member.password);
    expect(lines[0]).toMatch(/^signed in as Ada/);
    expect(lines).toContain('0 products');
    expect(lines.at(-1)).toMatch(/^event_withdraw refused: 4\d\d (ActionError|TransactionError)$/);
  });
});
