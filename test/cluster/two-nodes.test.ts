import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { revokeKey } from '../../src/accounts/api-keys.js';
import { S3BlobStore } from '../../src/drive/blobs/s3.js';
import { createTier as createTierService } from '../../src/tiers/tiers.js';
import { systemClock } from '../../src/lib/clock.js';
import { CARD_WEBHOOK_SECRET, cardDriver } from '../helpers/providers/card-driver.js';
import { STAND_IN_SOURCE_SETTINGS, createProduct, uniqueRef } from '../helpers/store.js';
import type { TestApp } from '../helpers/app.js';
import { pollUntil } from '../helpers/processes.js';
import { call, memberWithKey, S3_BUCKET, setSettings, sleep, startCluster, type Cluster, type Node } from './harness.js';

// Two stateless nodes behind an imaginary load balancer (DESIGN 2): what one node does, the other must see.

let c: Cluster;
let A: Node;
let B: Node;
let startedAt: number;
beforeAll(async () => {
  startedAt = Date.now();
  c = await startCluster(2);
  [A, B] = c.nodes as [Node, Node];
  await setSettings(c, { api_require_https: false, drive_active: true, drive_upload_chunk_bytes: 64 * 1024, products_active: true, subscriptions_active: true, ...STAND_IN_SOURCE_SETTINGS });
});
afterAll(async () => c?.close());

/** What the shared test helpers need of an app, over the control connection. */
const controlApp = () => ({ services: c.control, clock: systemClock }) as unknown as TestApp;

/** A cookie jar over fetch, enough to sign in through the website's form. */
class Browser {
  private cookies = new Map<string, string>();
  constructor(private readonly node: Node) {}
  async request(method: string, url: string, form?: Record<string, string>) {
    const headers: Record<string, string> = { cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ') };
    if (form) headers['content-type'] = 'application/x-www-form-urlencoded';
    const res = await fetch(`http://127.0.0.1:${this.node.port}${url}`, { method, headers, body: form ? new URLSearchParams(form).toString() : undefined, redirect: 'manual' });
    for (const raw of res.headers.getSetCookie()) {
      const [pair] = raw.split(';');
      const at = pair!.indexOf('=');
      this.cookies.set(pair!.slice(0, at), pair!.slice(at + 1));
    }
    return { status: res.status, body: await res.text() };
  }
}
const formToken = (html: string, action: string) => {
  const m = /name="form_token" value="([0-9a-f]*)"/.exec(html.slice(html.indexOf(`action="${action}"`)));
  if (!m) throw new Error(`no form token for ${action}`);
  return m[1]!;
};

describe('two nodes on one PostgreSQL, Redis and S3 store', () => {
  it('keeps rate limits exact across both nodes: the N+1th request is refused whichever node serves it', async () => {
    const N = 12;
    await setSettings(c, { api_rate_limit_requests: N, api_rate_limit_window: 60 });
    try {
      for (const [i, last] of [[0, A], [1, B]] as const) {
        const ip = `10.31.0.${10 + i}`;
        const statuses: number[] = [];
        for (let n = 0; n < N; n++) statuses.push((await call(n % 2 ? A : B, 'GET', '/api/v1/auth/session', { ip })).status);
        expect(statuses.filter((s) => s === 429)).toEqual([]);
        const refused = await call(last, 'GET', '/api/v1/auth/session', { ip });
        expect(refused.status).toBe(429);
        expect(refused.json.errortype).toBe('RateLimitError');
        // And the other node agrees.
        expect((await call(last === A ? B : A, 'GET', '/api/v1/auth/session', { ip })).status).toBe(429);
      }
    } finally {
      await setSettings(c, { api_rate_limit_requests: 100_000, api_rate_limit_window: 60 });
    }
  });

  it('refuses a revoked key on both nodes on the very next request', async () => {
    const m = await memberWithKey(c);
    // Both nodes have seen (and may cache) the key.
    for (const n of [A, B, A, B]) expect((await call(n, 'GET', '/api/v1/auth/session', { headers: m.headers })).status).toBe(200);
    expect(await revokeKey(c.control.db, m.keyId, new Date())).toBe(true);
    const [a, b] = await Promise.all([call(A, 'GET', '/api/v1/auth/session', { headers: m.headers }), call(B, 'GET', '/api/v1/auth/session', { headers: m.headers })]);
    expect([a.status, b.status]).toEqual([401, 401]);
  });

  it('replays on node B an Idempotency-Key claimed on node A, answering 409 while A still executes it', async () => {
    const m = await memberWithKey(c);
    const key = `idem-${Date.now()}`;
    const headers = { ...m.headers, 'idempotency-key': key };
    const body = { usr_first_name: 'Replayed', usr_email: m.email };
    // Hold the member's row so node A's action waits inside its execution, its claim already committed.
    const pgClient = new (await import('pg')).default.Client({ connectionString: c.databaseUrl });
    await pgClient.connect();
    try {
      await pgClient.query('begin');
      await pgClient.query('select 1 from usr_users where usr_user_id = $1 for update', [m.userId]);
      const onA = call(A, 'POST', '/api/v1/action/account_edit', { headers, body });
      // Node A's claim is committed before its action runs (and waits on the held row).
      const claimed = await pollUntil(async () => {
        const row = await c.control.db.selectFrom('aik_api_idempotency_keys').select('aik_state').where('aik_scope', '=', `key:${m.keyId}`).executeTakeFirst();
        return row?.aik_state === 'executing' ? row : undefined;
      }, 10_000);
      expect(claimed?.aik_state).toBe('executing');
      const whileExecuting = await call(B, 'POST', '/api/v1/action/account_edit', { headers, body });
      expect(whileExecuting.status).toBe(409);
      expect(whileExecuting.json.errortype).toBeTypeOf('string');
      await pgClient.query('commit');
      const first = await onA;
      expect(first.status, first.text).toBe(200);
      const replay = await call(B, 'POST', '/api/v1/action/account_edit', { headers, body });
      expect(replay.status).toBe(200);
      expect(replay.json).toEqual(first.json);
      expect(replay.headers.get('idempotency-replayed')).toBe('true');
    } finally {
      await pgClient.end();
    }
  });

  it('applies on node B, within one second, a setting written through node A', async () => {
    const browser = new Browser(A);
    const login = await browser.request('GET', '/login');
    const signed = await browser.request('POST', '/login', { email: c.admin.email, password: c.admin.password, form_token: formToken(login.body, '/login'), next: '/' });
    expect(signed.status).toBe(303);
    const page = await browser.request('GET', '/admin/settings/subscriptions');
    expect(page.status).toBe(200);
    const gated = () => call(B, 'POST', '/api/v1/action/store_account_token', { body: {} });
    expect((await gated()).status).not.toBe(403);
    const saved = await browser.request('POST', '/admin/settings/subscriptions', { form_token: formToken(page.body, '/admin/settings/subscriptions'), subscriptions_active: 'false' });
    expect(saved.status).toBe(303);
    const writtenAt = Date.now();
    let seenAfter = Infinity;
    while (Date.now() - writtenAt < 3000) {
      if ((await gated()).status === 403) {
        seenAfter = Date.now() - writtenAt;
        break;
      }
      await sleep(20);
    }
    console.log(`setting written through node A applied on node B after ${seenAfter} ms`);
    expect(seenAfter).toBeLessThanOrEqual(1000);
    await setSettings(c, { subscriptions_active: true });
  });

  it('applies concurrent duplicate webhooks spread over both nodes once', async () => {
    await setSettings(c, { card_processor_webhook_secret: CARD_WEBHOOK_SECRET });
    const t = controlApp();
    const tierId = await createTierService(
      { db: c.control.db, clock: systemClock, registry: c.control.tiers.registry, createdBy: null },
      { sbt_name: `hook${Date.now()}`, sbt_display_name: 'HOOK', sbt_tier_level: 40, sbt_features: {}, sbt_is_active: true },
    );
    const m = await memberWithKey(c);
    const providerProductId = uniqueRef('price_');
    const productId = await createProduct(t, { tierId, refs: { pro_card_price_id: providerProductId } });
    const ref = uniqueRef('sub_');
    const delivery = await cardDriver.purchase(t, { userId: m.userId, productId, providerProductId, ref, at: new Date(), periodEnd: new Date(Date.now() + 30 * 86_400_000), eventId: uniqueRef('evt_') });
    const replies = await Promise.all(
      Array.from({ length: 8 }, (_, i) => call(i % 2 ? B : A, 'POST', '/api/v1/webhooks/card_processor', { headers: delivery.headers, raw: delivery.body })),
    );
    expect(replies.map((r) => r.status)).toEqual(Array(8).fill(200));
    const items = await c.control.db.selectFrom('odi_order_items').select('odi_ord_order_id').where('odi_subscription_reference', '=', ref).execute();
    expect(items).toHaveLength(1);
    const memberships = await c.control.db.selectFrom('grm_group_members').select('grm_sbt_subscription_tier_id').where('grm_foreign_key_id', '=', m.userId).where('grm_sbt_subscription_tier_id', 'is not', null).execute();
    expect(memberships).toEqual([{ grm_sbt_subscription_tier_id: tierId }]);
  });

  it('completes a Drive upload whose chunks alternate between the nodes, the blob landing in the shared store', async () => {
    const tierId = await createTierService(
      { db: c.control.db, clock: systemClock, registry: c.control.tiers.registry, createdBy: null },
      { sbt_name: `drive${Date.now()}`, sbt_display_name: 'DRIVE', sbt_tier_level: 50, sbt_features: { drive_storage_bytes: 10_000_000, drive_max_file_bytes: 5_000_000, drive_share_links: true, drive_versioning_depth: 3 }, sbt_is_active: true },
    );
    const m = await memberWithKey(c);
    await c.control.tiers.membership.assignManually(m.userId, tierId, null);
    const CHUNK = 64 * 1024;
    const bytes = Buffer.alloc(5 * CHUNK + 1234);
    for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 131 + (i >> 8)) & 0xff;
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    const init = await call(A, 'POST', '/api/v1/action/drive_upload_init', { headers: m.headers, body: { name: 'alternating.bin', size_bytes: bytes.length, sha256, mime_type: 'application/octet-stream' } });
    expect(init.status, init.text).toBe(200);
    const token = init.json.data.upload_token as string;
    let n = 0;
    for (let start = 0; start < bytes.length; start += CHUNK, n++) {
      const part = bytes.subarray(start, start + CHUNK);
      const res = await call(n % 2 ? A : B, 'PUT', `/api/v1/drive_upload/${token}`, {
        headers: { ...m.headers, 'content-type': 'application/octet-stream', 'content-range': `bytes ${start}-${start + part.length - 1}/${bytes.length}` },
        raw: part,
      });
      const node = n % 2 ? A : B;
      expect(res.status, `chunk ${n} on node ${node.name}: ${res.text}\n${res.status >= 500 ? node.process.output().slice(-3000) : ''}`).toBe(200);
      expect(res.json.data.received_bytes).toBe(start + part.length);
    }
    const progress = await call(A, 'GET', `/api/v1/drive_upload/${token}`, { headers: m.headers });
    expect(progress.json.data).toMatchObject({ received_bytes: bytes.length, expected_bytes: bytes.length });
    const done = await call(n % 2 ? A : B, 'POST', '/api/v1/action/drive_upload_complete', { headers: m.headers, body: { upload_token: token } });
    expect(done.status, done.text).toBe(200);
    expect(done.json.data.file).toMatchObject({ name: 'alternating.bin', size_bytes: bytes.length, sha256 });
    const blob = await c.control.db.selectFrom('fbb_file_blobs').select(['fbb_storage_key', 'fbb_driver']).where('fbb_sha256', '=', sha256).executeTakeFirstOrThrow();
    expect(blob.fbb_driver).toBe('s3');
    const store = new S3BlobStore({ endpoint: c.s3Endpoint, bucket: S3_BUCKET, region: 'us-east-1', accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER', forcePathStyle: true });
    try {
      expect(await store.stat(blob.fbb_storage_key)).toEqual({ size: bytes.length });
    } finally {
      store.close();
    }
  });

  it('runs each scheduled task on exactly one node per interval', async () => {
    // subscription_period_end wakes every 60 s on each node; the nodes started seconds apart. Wait for two
    // of its intervals (counted from the first node's start) to have passed.
    const INTERVAL = 60_000;
    const wait = startedAt + 2 * INTERVAL + 5_000 - Date.now();
    if (wait > 0) await sleep(wait);
    const row = await c.control.db.selectFrom('tsk_task_runs').select(['tsk_run_count']).where('tsk_name', '=', 'subscription_period_end').executeTakeFirstOrThrow();
    const intervals = Math.floor((Date.now() - startedAt) / INTERVAL);
    console.log(`subscription_period_end ran ${row.tsk_run_count} times in ${intervals} intervals on 2 nodes`);
    expect(row.tsk_run_count).toBeGreaterThanOrEqual(intervals - 1);
    expect(row.tsk_run_count).toBeLessThanOrEqual(intervals);
  }, 200_000);
});
