import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { createHash } from 'node:crypto';
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/lib/clock.js';
import { createTier as createTierService } from '../../src/tiers/tiers.js';
import type { TestApp } from '../helpers/app.js';
import { CARD_WEBHOOK_SECRET, cardDriver } from '../helpers/providers/card-driver.js';
import { STAND_IN_SOURCE_SETTINGS, createProduct, uniqueRef } from '../helpers/store.js';
import { call, memberWithKey, S3_BUCKET, setSettings, sleep, startCluster, type Cluster, type Node } from './harness.js';

// kill -9 under a mixed write load (issue 31): every acknowledged write is there afterwards, nothing is
// half-written (checked by SQL and by walking the blob store), the other node kept serving, and the killed
// node starts again cleanly. Once on two nodes (PostgreSQL, Redis, S3), once on the embedded database.

interface Ledger {
  folders: number[];
  files: Array<{ fileId: number; sha256: string; size: number }>;
  purchases: Array<{ ref: string; userId: number; tierId: number }>;
  /** Per member: the last acknowledged first name, and names sent after it whose answer never came. */
  profiles: Map<number, { acked: string | null; unanswered: string[] }>;
  acknowledged: number;
  afterKillOnSurvivor: number;
  /** Requests whose answer never came (cut off by the kill, or sent to the dead node). */
  cutOff: number;
}

async function setup(c: Cluster) {
  await setSettings(c, {
    api_require_https: false,
    drive_active: true,
    products_active: true,
    subscriptions_active: true,
    card_processor_webhook_secret: CARD_WEBHOOK_SECRET,
    // The store opens only with a configured billing source.
    ...STAND_IN_SOURCE_SETTINGS,
    api_rate_limit_requests: 1_000_000,
  });
  const ctx = { db: c.control.db, clock: systemClock, registry: c.control.tiers.registry, createdBy: null };
  const driveTier = await createTierService(ctx, { sbt_name: 'crashdrive', sbt_display_name: 'D', sbt_tier_level: 60, sbt_features: { drive_storage_bytes: 1_000_000_000, drive_max_file_bytes: 10_000_000, drive_share_links: true, drive_versioning_depth: 3 }, sbt_is_active: true });
  const paidTier = await createTierService(ctx, { sbt_name: 'crashpaid', sbt_display_name: 'P', sbt_tier_level: 70, sbt_features: {}, sbt_is_active: true });
  const t = { services: c.control, clock: systemClock } as unknown as TestApp;
  const providerProductId = uniqueRef('price_crash_');
  const productId = await createProduct(t, { tierId: paidTier, refs: { pro_card_price_id: providerProductId } });
  const members = [];
  for (let i = 0; i < 4; i++) {
    const m = await memberWithKey(c);
    await c.control.tiers.membership.assignManually(m.userId, driveTier, null);
    members.push(m);
  }
  const buyers = [];
  for (let i = 0; i < 60; i++) buyers.push(await memberWithKey(c));
  return { t, members, buyers, productId, providerProductId, paidTier };
}

/** Runs the mixed write load until stop() over the nodes given by pick(); records what was acknowledged. */
function load(c: Cluster, s: Awaited<ReturnType<typeof setup>>, pick: (n: number) => Node) {
  const ledger: Ledger = { folders: [], files: [], purchases: [], profiles: new Map(), acknowledged: 0, afterKillOnSurvivor: 0, cutOff: 0 };
  let running = true;
  let killedNode: Node | null = null;
  let seq = 0;
  const ack = (node: Node) => {
    ledger.acknowledged++;
    if (killedNode && node !== killedNode) ledger.afterKillOnSurvivor++;
  };
  const safe = async <T,>(f: () => Promise<T>): Promise<T | null> => {
    try {
      return await f();
    } catch {
      ledger.cutOff++;
      await sleep(20);
      return null;
    }
  };
  const workers: Array<Promise<void>> = [];
  for (const m of s.members) {
    ledger.profiles.set(m.userId, { acked: null, unanswered: [] });
    // Profile edits, one at a time per member.
    workers.push((async () => {
      while (running) {
        const node = pick(seq++);
        const name = `n${seq}`;
        const p = ledger.profiles.get(m.userId)!;
        const res = await safe(() => call(node, 'POST', '/api/v1/action/account_edit', { headers: m.headers, body: { usr_first_name: name, usr_email: m.email } }));
        if (res?.status === 200) {
          p.acked = name;
          p.unanswered = [];
          ack(node);
        } else if (!res) p.unanswered.push(name);
      }
    })());
    // Folders.
    workers.push((async () => {
      while (running) {
        const node = pick(seq++);
        const res = await safe(() => call(node, 'POST', '/api/v1/action/drive_folder_create', { headers: m.headers, body: { name: `f${seq}` } }));
        if (res?.status === 200) {
          ledger.folders.push(Number(res.json.data.folder_id ?? res.json.data.folder?.folder_id));
          ack(node);
        }
      }
    })());
    // Uploads: init, one chunk, complete, each step on the next node.
    workers.push((async () => {
      while (running) {
        const bytes = createHash('sha512').update(`${m.userId}-${seq++}-${Math.random()}`).digest();
        const body = Buffer.concat(Array.from({ length: 200 }, () => bytes));
        const sha256 = createHash('sha256').update(body).digest('hex');
        const init = await safe(() => call(pick(seq++), 'POST', '/api/v1/action/drive_upload_init', { headers: m.headers, body: { name: `u${seq}.bin`, size_bytes: body.length, sha256 } }));
        if (init?.status !== 200) continue;
        const token = init.json.data.upload_token;
        const put = await safe(() => call(pick(seq++), 'PUT', `/api/v1/drive_upload/${token}`, { headers: { ...m.headers, 'content-type': 'application/octet-stream', 'content-range': `bytes 0-${body.length - 1}/${body.length}` }, raw: body }));
        if (put?.status !== 200) continue;
        const node = pick(seq++);
        const done = await safe(() => call(node, 'POST', '/api/v1/action/drive_upload_complete', { headers: m.headers, body: { upload_token: token } }));
        if (done?.status === 200) {
          ledger.files.push({ fileId: Number(done.json.data.file.file_id), sha256, size: body.length });
          ack(node);
        }
      }
    })());
  }
  // Purchases by webhook, each buyer once.
  workers.push((async () => {
    let i = 0;
    while (running && i < s.buyers.length) {
      const buyer = s.buyers[i++]!;
      const ref = uniqueRef('sub_crash_');
      const d = await cardDriver.purchase(s.t, { userId: buyer.userId, productId: s.productId, providerProductId: s.providerProductId, ref, at: new Date(), periodEnd: new Date(Date.now() + 30 * 86_400_000), eventId: uniqueRef('evt_') });
      const node = pick(seq++);
      const res = await safe(() => call(node, 'POST', '/api/v1/webhooks/card_processor', { headers: d.headers, raw: d.body }));
      if (res?.status === 200) {
        ledger.purchases.push({ ref, userId: buyer.userId, tierId: s.paidTier });
        ack(node);
      }
    }
  })());
  return {
    ledger,
    killed(node: Node) {
      killedNode = node;
    },
    async stop() {
      running = false;
      await Promise.all(workers);
    },
  };
}

/** Every blob object's key and size in the store. */
async function walkBlobs(c: Cluster): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  if (c.embedded) {
    const root = path.join(c.nodes[0]!.dataDir, 'blobs');
    const walk = async (dir: string): Promise<void> => {
      for (const e of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
        const full = path.join(dir, e.name);
        if (e.isDirectory()) await walk(full);
        else if (/^[0-9a-f]{64}$/.test(e.name)) out.set(path.relative(root, full), (await stat(full)).size);
      }
    };
    await walk(root);
    return out;
  }
  const client = new S3Client({ endpoint: c.s3Endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } });
  let token: string | undefined;
  do {
    const page = await client.send(new ListObjectsV2Command({ Bucket: S3_BUCKET, Prefix: 'blobs/', ContinuationToken: token }));
    for (const o of page.Contents ?? []) out.set(o.Key!, o.Size ?? 0);
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  client.destroy();
  return out;
}

/** The invariants, by SQL and by walking the blob store; returns how many were checked. */
async function checkInvariants(c: Cluster, db: pg.Client, ledger: Ledger): Promise<number> {
  let checked = 0;
  const one = async (sqlText: string, params: unknown[] = []) => (await db.query(sqlText, params)).rows;
  const expectNone = async (what: string, sqlText: string) => {
    const rows = await one(sqlText);
    expect(rows, what).toEqual([]);
    checked++;
  };
  // Every acknowledged write is present.
  const folders = new Set((await one('select fol_folder_id from fol_folders where fol_folder_id = any($1::int[])', [ledger.folders])).map((r) => Number(r.fol_folder_id)));
  for (const id of ledger.folders) expect(folders.has(id), `acknowledged folder ${id}`).toBe(true);
  checked += ledger.folders.length;
  const files = new Map((await one('select f.fil_file_id, b.fbb_sha256, b.fbb_size_bytes from fil_files f join fbb_file_blobs b on b.fbb_file_blob_id = f.fil_fbb_file_blob_id where f.fil_file_id = any($1::int[])', [ledger.files.map((f) => f.fileId)])).map((r) => [Number(r.fil_file_id), { fbb_sha256: r.fbb_sha256, fbb_size_bytes: Number(r.fbb_size_bytes) }]));
  for (const f of ledger.files) expect(files.get(f.fileId), `acknowledged file ${f.fileId}`).toMatchObject({ fbb_sha256: f.sha256, fbb_size_bytes: f.size });
  checked += ledger.files.length;
  for (const p of ledger.purchases) {
    const rows = await one(
      `select (select count(*)::int from odi_order_items where odi_subscription_reference = $1) as items,
              (select count(*)::int from grm_group_members where grm_foreign_key_id = $2 and grm_sbt_subscription_tier_id = $3) as memberships`,
      [p.ref, p.userId, p.tierId],
    );
    expect(rows[0], `acknowledged purchase ${p.ref}`).toEqual({ items: 1, memberships: 1 });
    checked++;
  }
  for (const [userId, p] of ledger.profiles) {
    if (p.acked === null) continue;
    const [row] = await one('select usr_first_name from usr_users where usr_user_id = $1', [userId]);
    expect([p.acked, ...p.unanswered], `profile of ${userId}`).toContain(row.usr_first_name);
    checked++;
  }
  // Nothing half-written.
  await expectNone('orders without items', 'select o.ord_order_id from ord_orders o where not exists (select 1 from odi_order_items i where i.odi_ord_order_id = o.ord_order_id)');
  await expectNone('tier memberships in the wrong group or of no tier', `select m.grm_group_member_id from grm_group_members m left join sbt_subscription_tiers t on t.sbt_subscription_tier_id = m.grm_sbt_subscription_tier_id
     where m.grm_sbt_subscription_tier_id is not null and (t.sbt_subscription_tier_id is null or t.sbt_grp_group_id <> m.grm_grp_group_id)`);
  await expectNone('a member in two tiers', 'select grm_foreign_key_id from grm_group_members where grm_sbt_subscription_tier_id is not null group by grm_foreign_key_id having count(*) > 1');
  await expectNone('uploads with more received than expected', 'select fup_file_upload_id from fup_file_uploads where fup_received_bytes > fup_expected_bytes');
  await expectNone('files whose blob row is missing', 'select f.fil_file_id from fil_files f left join fbb_file_blobs b on b.fbb_file_blob_id = f.fil_fbb_file_blob_id where f.fil_fbb_file_blob_id is not null and b.fbb_file_blob_id is null');
  await expectNone('blob refcounts that do not match their references', `select b.fbb_file_blob_id from fbb_file_blobs b
     where b.fbb_refcount <> (select count(*) from fil_files f where f.fil_fbb_file_blob_id = b.fbb_file_blob_id) + (select count(*) from fvr_file_versions v where v.fvr_fbb_file_blob_id = b.fbb_file_blob_id)`);
  // Every blob row's bytes are in the store, whole.
  const objects = await walkBlobs(c);
  const blobs = await one('select fbb_storage_key, fbb_size_bytes from fbb_file_blobs');
  for (const b of blobs) {
    const key = c.embedded ? b.fbb_storage_key.replace(/^blobs\//, '') : b.fbb_storage_key;
    expect(objects.get(key) ?? objects.get(b.fbb_storage_key), `blob ${b.fbb_storage_key} in the store`).toBe(Number(b.fbb_size_bytes));
  }
  checked += blobs.length;
  const referenced = new Set(blobs.map((b) => b.fbb_storage_key));
  const orphans = [...objects.keys()].filter((k) => !referenced.has(k) && !referenced.has(`blobs/${k}`)).length;
  console.log(`blob store: ${objects.size} objects, ${blobs.length} blob rows, ${orphans} unreferenced objects (garbage, not references)`);
  return checked;
}

describe('kill -9 under a mixed write load', () => {
  let c: Cluster | undefined;
  afterAll(async () => c?.close());

  it('on two nodes (PostgreSQL, Redis, S3): acknowledged writes all there, nothing half-written, B kept serving, A restarts', async () => {
    c = await startCluster(2);
    const s = await setup(c);
    const [A, B] = c.nodes as [Node, Node];
    const run = load(c, s, (n) => (n % 2 ? A : B));
    await sleep(4000);
    run.killed(A);
    A.process.child.kill('SIGKILL');
    await A.process.exited;
    await sleep(3000);
    await run.stop();
    const { ledger } = run;
    console.log(`two nodes: ${ledger.acknowledged} writes acknowledged (${ledger.folders.length} folders, ${ledger.files.length} uploads, ${ledger.purchases.length} purchases, profile edits), ${ledger.afterKillOnSurvivor} on node B after node A was killed, ${ledger.cutOff} requests cut off`);
    expect(ledger.afterKillOnSurvivor).toBeGreaterThan(0);
    expect(ledger.cutOff, 'requests cut off by the kill').toBeGreaterThan(0);
    const restarted = await c.start(0);
    expect((await call(restarted, 'GET', '/api/v1/auth/session', { headers: s.members[0]!.headers })).status).toBe(200);
    const db = new pg.Client({ connectionString: c.databaseUrl });
    await db.connect();
    try {
      const checked = await checkInvariants(c, db, ledger);
      console.log(`two nodes: ${checked} invariants checked, every acknowledged write found`);
    } finally {
      await db.end();
    }
    await c.close();
    c = undefined;
  }, 300_000);

  it('on the embedded database: the single server killed under load restarts on its data directory with everything acknowledged', async () => {
    c = await startCluster(1, { embedded: true });
    const s = await setup(c);
    const node = c.nodes[0]!;
    const run = load(c, s, () => node);
    await sleep(4000);
    run.killed(node);
    node.process.child.kill('SIGKILL');
    await node.process.exited;
    await run.stop();
    const { ledger } = run;
    console.log(`embedded: ${ledger.acknowledged} writes acknowledged (${ledger.folders.length} folders, ${ledger.files.length} uploads, ${ledger.purchases.length} purchases)`);
    expect(ledger.acknowledged).toBeGreaterThan(0);
    expect(ledger.cutOff, 'requests cut off by the kill').toBeGreaterThan(0);
    const restarted = await c.start(0);
    expect((await call(restarted, 'GET', '/api/v1/auth/session', { headers: s.members[0]!.headers })).status).toBe(200);
    const db = new pg.Client({ host: node.dataDir, user: 'postgres', database: 'postgres' });
    await db.connect();
    try {
      const checked = await checkInvariants(c, db, ledger);
      console.log(`embedded: ${checked} invariants checked, every acknowledged write found`);
    } finally {
      await db.end();
    }
  }, 400_000);
});
