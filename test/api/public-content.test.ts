import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { curlExamples } from '../helpers/doc-curl.js';

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..', '..');
const DOC = 'docs/public-content.md';

// docs/public-content.md: what an app reads before sign-in. Its curl examples are read from the document
// and sent in order; its CLI steps (a reader account, a capability-1 key) are mirrored with the helpers.
describe(`${DOC}: public content before sign-in`, () => {
  let t: TestApp;
  let vars: Record<string, string>;

  beforeAll(async () => {
    t = await createTestApp();
    const admin = await t.createUser({ email: 'admin@gatehouse.local', permission: 10 });
    const adminKey = await t.createMachineKey({ userId: admin.userId, permission: 4 });
    const reader = await t.createUser({ email: 'app-reader@example.com', permission: 0, firstName: 'App', lastName: 'Reader' });
    const readerKey = await t.createMachineKey({ userId: reader.userId, permission: 1 });
    vars = { PUBLIC_KEY: adminKey.publicKey, SECRET_KEY: adminKey.secretKey, READER_PUBLIC_KEY: readerKey.publicKey, READER_SECRET_KEY: readerKey.secretKey };
  });
  afterAll(async () => t.close());

  it('every documented request answers what the document shows, in order', async () => {
    const examples = curlExamples(readFileSync(path.join(ROOT, DOC), 'utf8'), vars);
    expect(examples.map((e) => `${e.method} ${e.url}`)).toEqual([
      'GET /api/v1/form/register',
      'GET /api/v1/Posts',
      'POST /api/v1/Post',
      'POST /api/v1/Post',
      'GET /api/v1/Posts?numperpage=10&sort=pst_post_id',
      'POST /api/v1/Post',
    ]);
    for (const [i, example] of examples.entries()) {
      const res = await t.request({ method: example.method as 'GET' | 'POST', url: example.url, headers: example.headers, payload: example.body });
      expect(example.expected.jsonParts.length, `example ${i + 1} shows its answer`).toBeGreaterThan(0);
      for (const part of example.expected.jsonParts) expect(res.body, `example ${i + 1} (${res.statusCode})`).toContain(part);
    }
  });

  it('the statuses behind the examples: anonymous CRUD 400, reader reads 200, reader writes 403', async () => {
    expect((await t.request({ method: 'GET', url: '/api/v1/Posts' })).statusCode).toBe(400);
    const readerHeaders = { public_key: vars.READER_PUBLIC_KEY!, secret_key: vars.READER_SECRET_KEY! };
    for (const cls of ['Posts', 'Pages', 'Events', 'Products', 'SubscriptionTiers']) {
      const res = await t.request({ method: 'GET', url: `/api/v1/${cls}`, headers: readerHeaders });
      expect(res.statusCode, cls).toBe(200);
    }
    const write = await t.request({ method: 'POST', url: '/api/v1/Post', headers: { ...readerHeaders, 'content-type': 'application/x-www-form-urlencoded' }, payload: 'pst_title=Spam' });
    expect(write.statusCode).toBe(403);
    const only = await t.request({ method: 'GET', url: '/api/v1/Posts?max_visible_tier_level=0', headers: readerHeaders });
    expect(only.json.data.map((p: { pst_title: string }) => p.pst_title)).toEqual(['Welcome']);
  });

  it('the table of what needs no credential: each answers 200 to a request without one', async () => {
    for (const url of ['/', '/pricing', '/rss', '/api/openapi.json', '/api/docs', '/api/v1/actions', '/api/v1/form/register', '/api/v1/form/password_reset_1']) {
      const res = await t.request({ method: 'GET', url });
      expect(res.statusCode, url).toBe(200);
    }
    const post = (await t.request({ method: 'GET', url: '/api/v1/Posts?max_visible_tier_level=0', headers: { public_key: vars.READER_PUBLIC_KEY!, secret_key: vars.READER_SECRET_KEY! } })).json.data[0];
    expect((await t.request({ method: 'GET', url: `/post/${post.pst_post_id}` })).statusCode).toBe(200);
  });
});
