import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/lib/crypto.js';
import { systemClock } from '../../src/lib/clock.js';
import { createTier as createTierService } from '../../src/tiers/tiers.js';
import { call, memberWithKey, setSettings, sleep, startCluster, type Cluster, type Node } from './harness.js';

// Issue 35 item 9 with real processes: a node killed (kill -9) in the middle of a chunk left the chunk's
// lease behind for 90 s, and every PUT of that upload, on any node, answered 409 chunk_in_progress until
// it lapsed (a review finished 4 of 8 uploads across kills). Now the same node started again takes its
// earlier boot's lease over at once, and the surviving node takes it once it lapses (within the 10 s
// lease), having been told how long to wait. Two nodes on PostgreSQL, Redis and S3.

const CHUNK = 64 * 1024;
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

describe('uploads across kill -9', () => {
  let c: Cluster;
  let m: { userId: number; headers: Record<string, string> };
  beforeAll(async () => {
    c = await startCluster(2);
    await setSettings(c, { api_require_https: false, drive_active: true, drive_upload_chunk_bytes: CHUNK, api_upload_rate_limit_requests: 1_000_000 });
    const ctx = { db: c.control.db, clock: systemClock, registry: c.control.tiers.registry, createdBy: null };
    const tier = await createTierService(ctx, { sbt_name: 'killdrive', sbt_display_name: 'K', sbt_tier_level: 61, sbt_features: { drive_storage_bytes: 1_000_000_000, drive_max_file_bytes: 50_000_000, drive_share_links: true, drive_versioning_depth: 3 }, sbt_is_active: true });
    m = await memberWithKey(c);
    await c.control.tiers.membership.assignManually(m.userId, tier, null);
  }, 240_000);
  afterAll(async () => c?.close(), 60_000);

  const init = async (node: Node, bytes: Buffer, name: string) => {
    const res = await call(node, 'POST', '/api/v1/action/drive_upload_init', { headers: m.headers, body: { name, size_bytes: bytes.length, sha256: sha256(bytes) } });
    expect(res.status).toBe(200);
    return res.json.data.upload_token as string;
  };
  const put = (node: Node, token: string, bytes: Buffer, start: number) => {
    const end = Math.min(start + CHUNK, bytes.length);
    return call(node, 'PUT', `/api/v1/drive_upload/${token}`, {
      headers: { ...m.headers, 'content-type': 'application/octet-stream', 'content-range': `bytes ${start}-${end - 1}/${bytes.length}` },
      raw: bytes.subarray(start, end),
    });
  };
  /** A chunk whose second half follows 250 ms after its first (so a kill lands mid-chunk); null when the connection fails. */
  const slowPut = (node: Node, token: string, bytes: Buffer, start: number) =>
    new Promise<{ status: number; json: any } | null>((resolve) => {
      const end = Math.min(start + CHUNK, bytes.length);
      const req = http.request(
        {
          host: '127.0.0.1',
          port: node.port,
          method: 'PUT',
          path: `/api/v1/drive_upload/${token}`,
          headers: { ...m.headers, 'content-type': 'application/octet-stream', 'content-range': `bytes ${start}-${end - 1}/${bytes.length}`, 'content-length': String(end - start) },
        },
        (res) => {
          let text = '';
          res.on('data', (d: Buffer) => (text += d.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(text || '{}') }));
          res.on('error', () => resolve(null));
        },
      );
      req.on('error', () => resolve(null));
      const mid = start + Math.floor((end - start) / 2);
      req.write(bytes.subarray(start, mid));
      setTimeout(() => req.end(bytes.subarray(mid, end)), 250);
    });
  const leaseOf = async (token: string) =>
    c.control.db.selectFrom('fup_file_uploads').select(['fup_lease_token', 'fup_lease_until']).where('fup_token_hash', '=', sha256Hex(token)).executeTakeFirstOrThrow();

  /** Sends the first half of chunk 0 to the node and keeps the connection open; resolves once the node holds the lease. */
  async function halfAChunk(node: Node, token: string, bytes: Buffer) {
    const req = http.request({
      host: '127.0.0.1',
      port: node.port,
      method: 'PUT',
      path: `/api/v1/drive_upload/${token}`,
      headers: { ...m.headers, 'content-type': 'application/octet-stream', 'content-range': `bytes 0-${CHUNK - 1}/${bytes.length}`, 'content-length': String(CHUNK) },
    });
    req.on('error', () => {});
    req.write(bytes.subarray(0, CHUNK / 2));
    for (let i = 0; i < 200 && (await leaseOf(token)).fup_lease_token === null; i++) await sleep(50);
    expect((await leaseOf(token)).fup_lease_token).not.toBeNull();
    return req;
  }

  async function completeAndCheck(node: Node, token: string, bytes: Buffer) {
    const done = await call(node, 'POST', '/api/v1/action/drive_upload_complete', { headers: { ...m.headers, 'idempotency-key': `k-${token.slice(0, 16)}` }, body: { upload_token: token } });
    expect(done.status).toBe(200);
    expect(done.json.data.file.size_bytes).toBe(bytes.length);
  }

  it('the killed node, started again, takes its dead lease over at once', async () => {
    const [A] = c.nodes as [Node, Node];
    const bytes = randomBytes(2 * CHUNK + 17);
    const token = await init(A, bytes, 'restart.bin');
    const req = await halfAChunk(A, token, bytes);
    A.process.child.kill('SIGKILL');
    await A.process.exited;
    req.destroy();
    // However long the restart takes, the dead boot's lease still stands when the next PUT arrives.
    await c.control.db.updateTable('fup_file_uploads').set({ fup_lease_until: new Date(Date.now() + 300_000) }).where('fup_token_hash', '=', sha256Hex(token)).execute();
    const again = await c.start(0);
    const first = await put(again, token, bytes, 0);
    expect(first.status).toBe(200);
    expect(first.json.data.received_bytes).toBe(CHUNK);
    for (let start = CHUNK; start < bytes.length; start += CHUNK) expect((await put(again, token, bytes, start)).status).toBe(200);
    await completeAndCheck(again, token, bytes);
  }, 180_000);

  it('the surviving node says how long to wait, then takes the dead lease once it lapses', async () => {
    const [A, B] = c.nodes as [Node, Node];
    const bytes = randomBytes(2 * CHUNK + 17);
    const token = await init(B, bytes, 'survivor.bin');
    const req = await halfAChunk(A, token, bytes);
    A.process.child.kill('SIGKILL');
    await A.process.exited;
    req.destroy();
    const killedAt = Date.now();
    const refused = await put(B, token, bytes, 0);
    expect(refused.status).toBe(409);
    expect(refused.json.data).toMatchObject({ reason: 'chunk_in_progress', received_bytes: 0 });
    const wait = refused.json.data.retry_after as number;
    expect(wait).toBeGreaterThanOrEqual(1);
    expect(wait).toBeLessThanOrEqual(10);
    expect(refused.headers.get('retry-after')).toBe(String(wait));
    await sleep(wait * 1000 + 200);
    const taken = await put(B, token, bytes, 0);
    expect(taken.status).toBe(200);
    // Within a lease's length of the kill (plus this machine's slowness), not 90 s.
    expect(Date.now() - killedAt).toBeLessThan(20_000);
    for (let start = CHUNK; start < bytes.length; start += CHUNK) expect((await put(B, token, bytes, start)).status).toBe(200);
    await completeAndCheck(B, token, bytes);
    await c.start(0);
  }, 180_000);

  it('eight uploads under a kill -9 and a restart all finish (a client that does what the answers say)', async () => {
    const uploads = Array.from({ length: 8 }, (_, i) => ({ bytes: randomBytes(6 * CHUNK + i), name: `eight-${i}.bin` }));
    const alive = new Set([0, 1]);
    const seen = { inProgress: 0, waitedSeconds: 0, cutOff: 0 };
    const nodeFor = (i: number) => c.nodes[[...alive][i % alive.size]!]!;
    // A client as the page is now: on a lost connection another node (a load balancer) from the
    // server's offset; on 409 chunk_in_progress wait retry_after; completion with an Idempotency-Key.
    async function run(i: number): Promise<boolean> {
      const { bytes, name } = uploads[i]!;
      const deadline = Date.now() + 90_000;
      let token: string | null = null;
      let turn = i;
      while (token === null && Date.now() < deadline) {
        const res = await call(nodeFor(turn++), 'POST', '/api/v1/action/drive_upload_init', { headers: m.headers, body: { name, size_bytes: bytes.length } }).catch(() => null);
        if (res?.status === 200) token = res.json.data.upload_token;
        else await sleep(250);
      }
      if (token === null) return false;
      let offset = 0;
      while (offset < bytes.length && Date.now() < deadline) {
        const res = await slowPut(nodeFor(turn), token, bytes, offset);
        if (res === null) {
          seen.cutOff++;
          turn++;
          await sleep(250);
          const status = await call(nodeFor(turn), 'GET', `/api/v1/drive_upload/${token}`, { headers: m.headers }).catch(() => null);
          if (status?.status === 200) offset = status.json.data.received_bytes;
        } else if (res.status === 200) offset = res.json.data.received_bytes;
        else if (res.status === 409 && res.json.data.reason === 'chunk_in_progress') {
          seen.inProgress++;
          seen.waitedSeconds += res.json.data.retry_after;
          await sleep(res.json.data.retry_after * 1000);
        }
        else if (res.status === 409) offset = res.json.data.received_bytes;
        else return false;
        await sleep(30);
      }
      while (Date.now() < deadline) {
        const done = await call(nodeFor(turn++), 'POST', '/api/v1/action/drive_upload_complete', { headers: { ...m.headers, 'idempotency-key': `eight-${token.slice(0, 16)}` }, body: { upload_token: token } }).catch(() => null);
        if (done?.status === 200) return true;
        if (done && done.status < 500 && done.status !== 409) return false;
        await sleep(250);
      }
      return false;
    }
    const runs = uploads.map((_, i) => run(i));
    await sleep(1000);
    alive.delete(0);
    c.nodes[0]!.process.child.kill('SIGKILL');
    await c.nodes[0]!.process.exited;
    await c.start(0);
    alive.add(0);
    const finished = (await Promise.all(runs)).filter(Boolean).length;
    console.log(`uploads finished across the kill: ${finished} of ${uploads.length}; chunks cut off ${seen.cutOff}, chunk_in_progress answers ${seen.inProgress} (${seen.waitedSeconds} s waited)`);
    expect(finished).toBe(8);
    for (const u of uploads) {
      const row = await c.control.db
        .selectFrom('fil_files')
        .innerJoin('fbb_file_blobs', 'fbb_file_blob_id', 'fil_fbb_file_blob_id')
        .select('fbb_sha256')
        .where('fil_name', '=', u.name)
        .where('fil_usr_user_id', '=', m.userId)
        .executeTakeFirstOrThrow();
      expect(row.fbb_sha256.trim()).toBe(sha256(u.bytes));
    }
  }, 240_000);
});
