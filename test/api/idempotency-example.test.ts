import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { curlExamples, sectionOf } from '../helpers/doc-curl.js';

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..', '..');
const DOC = 'docs/api/actions.md';

// The Idempotency example of docs/api/actions.md, read from the document and sent as written: it runs
// against a fresh install's initial admin (admin@gatehouse.local) with its machine key.
describe(`the idempotency example of ${DOC} works as written`, () => {
  let t: TestApp;
  let vars: Record<string, string>;

  beforeAll(async () => {
    t = await createTestApp();
    const admin = await t.createUser({ email: 'admin@gatehouse.local', permission: 10, firstName: 'Admin', lastName: 'Gatehouse' });
    const key = await t.createMachineKey({ userId: admin.userId, permission: 4 });
    vars = { PUBLIC_KEY: key.publicKey, SECRET_KEY: key.secretKey };
  });
  afterAll(async () => t.close());

  it('each documented request answers what the document shows, in order', async () => {
    const examples = curlExamples(sectionOf(readFileSync(path.join(ROOT, DOC), 'utf8'), 'Idempotency'), vars);
    expect(examples.map((e) => [e.method, e.url, e.expected.status])).toEqual([
      ['POST', '/api/v1/action/account_edit', 200],
      ['POST', '/api/v1/action/account_edit', 200],
      ['POST', '/api/v1/action/account_edit', 409],
    ]);
    for (const [i, example] of examples.entries()) {
      const res = await t.request({ method: example.method as 'POST', url: example.url, headers: example.headers, payload: example.body });
      expect(res.statusCode, `example ${i + 1}: ${res.body}`).toBe(example.expected.status);
      for (const [name, value] of Object.entries(example.expected.headers)) expect(res.headers[name], `example ${i + 1}: header ${name}`).toBe(value);
      if (!('idempotency-replayed' in example.expected.headers)) expect(res.headers['idempotency-replayed']).toBeUndefined();
      expect(example.expected.jsonParts.length, `example ${i + 1} shows its answer`).toBeGreaterThan(0);
      for (const part of example.expected.jsonParts) expect(res.body, `example ${i + 1}`).toContain(part);
    }
    // The refused third request changed nothing: the profile is the first request's.
    const user = await t.database.db.selectFrom('usr_users').select(['usr_first_name', 'usr_last_name']).where('usr_email', '=', 'admin@gatehouse.local').executeTakeFirstOrThrow();
    expect(user).toEqual({ usr_first_name: 'Ada', usr_last_name: 'Lovelace' });
  });
});
