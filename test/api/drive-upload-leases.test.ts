import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/lib/crypto.js';
import { chunkTimings } from '../../src/surfaces/drive/uploads.js';
import { pollUntil } from '../helpers/processes.js';
import { action, CHUNK, content, createDriveApp, member, PLAN, putChunk, type DriveApp } from './drive-upload-fixture.js';

// Issue 35 item 9: a chunk's lease was released only in the request's finally and lasted 90 s, so a
// process that died mid-chunk blocked the upload on every node for 85-90 s. A lease now names its
// holder (node and boot), is short and renewed while the chunk is received; the same node started again
// takes its earlier boot's lease over at once, any other node once it lapses, and the 409 says how long
// to wait (data.retry_after and Retry-After).

describe('chunk leases', () => {
  let t: DriveApp;
  beforeAll(async () => {
    t = await createDriveApp();
  });
  afterAll(async () => t?.close());

  const holder = () => t.services.driveStorage.leaseHolder;
  const leaseOf = (token: string) =>
    t.services.db
      .selectFrom('fup_file_uploads')
      .select(['fup_lease_token', 'fup_lease_until', 'fup_received_bytes'])
      .where('fup_token_hash', '=', sha256Hex(token))
      .executeTakeFirstOrThrow();
  const holdLease = async (token: string, lease: string, seconds: number) => {
    await t.services.db
      .updateTable('fup_file_uploads')
      .set({ fup_lease_token: lease, fup_lease_until: new Date(t.clock.nowMs() + seconds * 1000) })
      .where('fup_token_hash', '=', sha256Hex(token))
      .execute();
  };
  /** A whole first chunk whose body arrives as the test writes it. */
  const slowChunk = (m: { headers: Record<string, string> }, token: string, body: PassThrough, total: number) =>
    t.request({
      method: 'PUT',
      url: `/api/v1/drive_upload/${token}`,
      headers: { ...m.headers, 'content-type': 'application/octet-stream', 'content-range': `bytes 0-${CHUNK - 1}/${total}` },
      payload: body,
    });
  const open = async (m: { headers: Record<string, string> }, bytes: Buffer) =>
    (await action(t, m.headers, 'drive_upload_init', { name: 'l.bin', size_bytes: bytes.length })).json.data.upload_token as string;

  it("takes over at once a lease that an earlier boot of this node holds (that process is gone)", async () => {
    const m = await member(t, PLAN);
    const bytes = content(CHUNK + 10, 'reboot');
    const token = await open(m, bytes);
    // The process before a kill -9 took the lease for an hour's worth of renewals and died (no process
    // of this node runs under that boot).
    await holdLease(token, `${holder().node}.${'0'.repeat(16)}.${'1'.repeat(16)}`, 3600);
    const res = await putChunk(t, m.headers, token, bytes.subarray(0, CHUNK), 0, bytes.length);
    expect(res.statusCode).toBe(200);
    expect(res.json.data.received_bytes).toBe(CHUNK);
    expect((await leaseOf(token)).fup_lease_token).toBeNull();
  });

  it('leaves alone the lease of another boot of this node whose process still runs (two processes on one DATA_DIR)', async () => {
    const m = await member(t, PLAN);
    const bytes = content(CHUNK + 10, 'sibling');
    const token = await open(m, bytes);
    const sibling = '6'.repeat(16);
    // The parent of this test process is alive: a boot recorded with its pid is a live process.
    await writeFile(path.join(t.dataDir, 'uploads', 'boots', sibling), `${process.ppid}\n`);
    await holdLease(token, `${holder().node}.${sibling}.${'7'.repeat(16)}`, 4);
    const refused = await putChunk(t, m.headers, token, bytes.subarray(0, CHUNK), 0, bytes.length);
    expect(refused.statusCode).toBe(409);
    expect(refused.json.data).toEqual({ reason: 'chunk_in_progress', received_bytes: 0, expected_bytes: bytes.length, retry_after: 4 });
    // Once that process is gone (its pid no longer runs), the lease is taken at once.
    await writeFile(path.join(t.dataDir, 'uploads', 'boots', sibling), '2147483646\n');
    expect((await putChunk(t, m.headers, token, bytes.subarray(0, CHUNK), 0, bytes.length)).statusCode).toBe(200);
  });

  it("answers 409 chunk_in_progress with retry_after and Retry-After while another node's lease holds, and takes it once it lapses", async () => {
    const m = await member(t, PLAN);
    const bytes = content(CHUNK + 10, 'other-node');
    const token = await open(m, bytes);
    await holdLease(token, `${'f'.repeat(16)}.${'2'.repeat(16)}.${'3'.repeat(16)}`, 7);
    const refused = await putChunk(t, m.headers, token, bytes.subarray(0, CHUNK), 0, bytes.length);
    expect(refused.statusCode).toBe(409);
    expect(refused.json.errortype).toBe('ActionError');
    expect(refused.json.data).toEqual({ reason: 'chunk_in_progress', received_bytes: 0, expected_bytes: bytes.length, retry_after: 7 });
    expect(refused.headers['retry-after']).toBe('7');
    t.clock.advanceSeconds(5);
    const still = await putChunk(t, m.headers, token, bytes.subarray(0, CHUNK), 0, bytes.length);
    expect(still.json.data.retry_after).toBe(2);
    expect(still.headers['retry-after']).toBe('2');
    t.clock.advanceSeconds(2.5);
    expect((await putChunk(t, m.headers, token, bytes.subarray(0, CHUNK), 0, bytes.length)).statusCode).toBe(200);
  });

  it('renews the lease while a chunk is being received, so a slow chunk keeps it; a second chunk meanwhile waits', async () => {
    const m = await member(t, PLAN);
    const bytes = content(CHUNK + 10, 'slow');
    const token = await open(m, bytes);
    chunkTimings.renewMs = 40;
    try {
      const body = new PassThrough();
      body.write(bytes.subarray(0, 1000));
      const slow = slowChunk(m, token, body, bytes.length);
      const first = await pollUntil(async () => (await leaseOf(token)).fup_lease_token ?? undefined, 5000);
      expect(first).toMatch(new RegExp(`^${holder().node}\\.${holder().boot}\\.[0-9a-f]{16}$`));
      // Far past a lease's length on the clock: the renewals keep it ahead.
      for (let i = 0; i < 3; i++) {
        t.clock.advanceSeconds(8);
        const target = t.clock.nowMs() + 5000;
        expect(await pollUntil(async () => ((await leaseOf(token)).fup_lease_until!.getTime() > target ? true : undefined), 5000)).toBe(true);
      }
      const meanwhile = await putChunk(t, m.headers, token, bytes.subarray(0, CHUNK), 0, bytes.length);
      expect(meanwhile.statusCode).toBe(409);
      expect(meanwhile.json.data).toMatchObject({ reason: 'chunk_in_progress', received_bytes: 0 });
      expect(meanwhile.json.data.retry_after).toBeGreaterThanOrEqual(1);
      expect(meanwhile.json.data.retry_after).toBeLessThanOrEqual(10);
      body.end(bytes.subarray(1000, CHUNK));
      const done = await slow;
      expect(done.statusCode).toBe(200);
      expect(done.json.data.received_bytes).toBe(CHUNK);
    } finally {
      chunkTimings.renewMs = 2_500;
    }
  });

  it('stops a chunk whose lease another node took (a renewal finds it gone): nothing of it is recorded', async () => {
    const m = await member(t, PLAN);
    const bytes = content(CHUNK + 10, 'taken');
    const token = await open(m, bytes);
    chunkTimings.renewMs = 40;
    try {
      const body = new PassThrough();
      body.write(bytes.subarray(0, 1000));
      const slow = slowChunk(m, token, body, bytes.length);
      await pollUntil(async () => (await leaseOf(token)).fup_lease_token ?? undefined, 5000);
      await holdLease(token, `${'e'.repeat(16)}.${'4'.repeat(16)}.${'5'.repeat(16)}`, 10);
      const res = await slow;
      expect(res.statusCode).toBe(409);
      expect(res.json.data).toEqual({ reason: 'wrong_offset', received_bytes: 0, expected_bytes: bytes.length });
      // The other node's lease stands.
      expect((await leaseOf(token)).fup_lease_token).toBe(`${'e'.repeat(16)}.${'4'.repeat(16)}.${'5'.repeat(16)}`);
    } finally {
      chunkTimings.renewMs = 2_500;
    }
  });
});
