import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chunkTimings } from '../../src/surfaces/drive/uploads.js';
import { purgeDriveUploadsTask } from '../../src/drive/uploads/purge-task.js';
import { reconcileDriveUsageTask } from '../../src/drive/reconcile-usage-task.js';
import { action, CHUNK, content, createDriveApp, member, PLAN, putChunk, sendAll, sha256, upload, type DriveApp } from './drive-upload-fixture.js';

describe('Drive chunked uploads', () => {
  let t: DriveApp;
  beforeAll(async () => {
    t = await createDriveApp();
  });
  afterAll(async () => {
    await t?.close();
  });

  const blobCount = async () => Number((await t.services.db.selectFrom('fbb_file_blobs').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
  const partFiles = async () => (await readdir(path.join(t.dataDir, 'uploads')).catch(() => [] as string[])).filter((n) => n.endsWith('.part'));
  const driveFiles = async (userId: number) =>
    t.services.db.selectFrom('fil_files').select(['fil_file_id', 'fil_size_bytes']).where('fil_usr_user_id', '=', userId).where('fil_source', '=', 'drive').where('fil_delete_time', 'is', null).execute();

  it('takes a multi-chunk upload, answers a resent chunk with 409 and received_bytes, and resumes', async () => {
    const m = await member(t, PLAN);
    const bytes = content(3 * CHUNK + 1000, 'resume');
    const init = await action(t, m.headers, 'drive_upload_init', { name: 'report.pdf', size_bytes: bytes.length, sha256: sha256(bytes), mime_type: 'application/pdf' });
    expect(init.statusCode).toBe(200);
    expect(init.json.data).toEqual({ upload_token: expect.stringMatching(/^[0-9a-f]{64}$/), chunk_bytes: CHUNK, expires_time: '2026-03-02 12:00:00', purpose: 'drive' });
    const token = init.json.data.upload_token;

    const first = await putChunk(t, m.headers, token, bytes.subarray(0, CHUNK), 0, bytes.length);
    expect(first.statusCode).toBe(200);
    expect(first.json.data).toEqual({ received_bytes: CHUNK, expected_bytes: bytes.length, complete: false, expires_time: '2026-03-02 12:00:00' });
    expect((await putChunk(t, m.headers, token, bytes.subarray(CHUNK, 2 * CHUNK), CHUNK, bytes.length)).statusCode).toBe(200);

    // The answer to the second chunk was "lost": the client sends it again.
    const resent = await putChunk(t, m.headers, token, bytes.subarray(CHUNK, 2 * CHUNK), CHUNK, bytes.length);
    expect(resent.statusCode).toBe(409);
    expect(resent.json.errortype).toBe('ActionError');
    expect(resent.json.data).toEqual({ reason: 'wrong_offset', received_bytes: 2 * CHUNK, expected_bytes: bytes.length });

    const status = await t.request({ method: 'GET', url: `/api/v1/drive_upload/${token}`, headers: m.headers });
    expect(status.statusCode).toBe(200);
    expect(status.json.data).toMatchObject({ received_bytes: 2 * CHUNK, expected_bytes: bytes.length, complete: false });

    // A chunk from beyond received_bytes is refused the same way.
    const ahead = await putChunk(t, m.headers, token, bytes.subarray(3 * CHUNK), 3 * CHUNK, bytes.length);
    expect(ahead.statusCode).toBe(409);
    expect(ahead.json.data.received_bytes).toBe(2 * CHUNK);

    expect((await putChunk(t, m.headers, token, bytes.subarray(2 * CHUNK, 3 * CHUNK), 2 * CHUNK, bytes.length)).statusCode).toBe(200);
    const last = await putChunk(t, m.headers, token, bytes.subarray(3 * CHUNK), 3 * CHUNK, bytes.length);
    expect(last.json.data).toMatchObject({ received_bytes: bytes.length, complete: true });

    const done = await action(t, m.headers, 'drive_upload_complete', { upload_token: token });
    expect(done.statusCode).toBe(200);
    expect(done.json.data.new_version).toBe(false);
    expect(done.json.data.file).toEqual({
      file_id: expect.any(Number),
      name: 'report.pdf',
      folder_id: null,
      size_bytes: bytes.length,
      mime_type: 'application/pdf',
      sha256: sha256(bytes),
      version_count: 0,
      is_trashed: false,
      owner_user_id: m.userId,
      create_time: '2026-03-01 12:00:00',
      update_time: '2026-03-01 12:00:00',
    });
    // The pending upload and its part file are gone; the token is now unknown.
    expect((await t.request({ method: 'GET', url: `/api/v1/drive_upload/${token}`, headers: m.headers })).statusCode).toBe(404);
    expect(await partFiles()).toEqual([]);
    const again = await action(t, m.headers, 'drive_upload_complete', { upload_token: token });
    expect(again.statusCode).toBe(422);
    expect(again.json.data.reason).toBe('not_found');
    const feed = await t.services.db.selectFrom('fch_file_changes').select(['fch_kind', 'fch_fil_file_id']).where('fch_usr_user_id', '=', m.userId).execute();
    expect(feed).toEqual([{ fch_kind: 'create', fch_fil_file_id: done.json.data.file.file_id }]);
  });

  it('refuses a hash mismatch and a size mismatch with nothing ingested, and keeps the upload', async () => {
    const m = await member(t, PLAN);
    const bytes = content(CHUNK + 10, 'mismatch');
    const blobsBefore = await blobCount();

    const wrongHash = await action(t, m.headers, 'drive_upload_init', { name: 'a.bin', size_bytes: bytes.length, sha256: sha256(content(10, 'other')) });
    const token = wrongHash.json.data.upload_token;
    await sendAll(t, m.headers, token, bytes);
    const refused = await action(t, m.headers, 'drive_upload_complete', { upload_token: token });
    expect(refused.statusCode).toBe(422);
    expect(refused.json.errortype).toBe('ActionError');
    expect(refused.json.data).toEqual({ reason: 'hash_mismatch', expected_sha256: sha256(content(10, 'other')), received_sha256: sha256(bytes) });

    const short = await action(t, m.headers, 'drive_upload_init', { name: 'b.bin', size_bytes: bytes.length });
    await putChunk(t, m.headers, short.json.data.upload_token, bytes.subarray(0, CHUNK), 0, bytes.length);
    const early = await action(t, m.headers, 'drive_upload_complete', { upload_token: short.json.data.upload_token });
    expect(early.statusCode).toBe(422);
    expect(early.json.data).toEqual({ reason: 'size_mismatch', received_bytes: CHUNK, expected_bytes: bytes.length });

    expect(await blobCount()).toBe(blobsBefore);
    expect(await driveFiles(m.userId)).toEqual([]);
    // Both uploads are still there to finish (the short one) or inspect.
    const kept = await t.request({ method: 'GET', url: `/api/v1/drive_upload/${short.json.data.upload_token}`, headers: m.headers });
    expect(kept.json.data.received_bytes).toBe(CHUNK);
    await putChunk(t, m.headers, short.json.data.upload_token, bytes.subarray(CHUNK), CHUNK, bytes.length);
    expect((await action(t, m.headers, 'drive_upload_complete', { upload_token: short.json.data.upload_token })).statusCode).toBe(200);
  });

  it('refuses by tier: file_too_large and quota_exceeded per plan, uploads_unavailable without one', async () => {
    const small = await member(t, { ...PLAN, drive_storage_bytes: 100_000, drive_max_file_bytes: 70_000 });
    const big = await member(t, { ...PLAN, drive_storage_bytes: 1_000_000, drive_max_file_bytes: 500_000 });
    const tierless = await member(t, null);
    const zero = await member(t, { ...PLAN, drive_storage_bytes: 0 });

    const tooLarge = await action(t, small.headers, 'drive_upload_init', { name: 'x', size_bytes: 80_000 });
    expect(tooLarge.statusCode).toBe(422);
    expect(tooLarge.json.data).toEqual({ reason: 'file_too_large', size_bytes: 80_000, max_file_bytes: 70_000, storage_bytes: 100_000, used_bytes: 0 });
    expect((await action(t, big.headers, 'drive_upload_init', { name: 'x', size_bytes: 80_000 })).statusCode).toBe(200);

    for (const who of [tierless, zero]) {
      const none = await action(t, who.headers, 'drive_upload_init', { name: 'x', size_bytes: 1 });
      expect(none.statusCode).toBe(422);
      expect(none.json.data.reason).toBe('uploads_unavailable');
    }

    // An open upload reserves its size (issue 35): the second init no longer fits beside the first.
    const a = content(60_000, 'qa');
    const b = content(30_000, 'qb');
    const initA = await action(t, small.headers, 'drive_upload_init', { name: 'a', size_bytes: a.length });
    expect(initA.statusCode).toBe(200);
    const refused = await action(t, small.headers, 'drive_upload_init', { name: 'b2', size_bytes: 60_000 });
    expect(refused.statusCode).toBe(422);
    expect(refused.json.data).toEqual({ reason: 'quota_exceeded', size_bytes: 60_000, max_file_bytes: 70_000, storage_bytes: 100_000, used_bytes: 60_000 });
    const initB = await action(t, small.headers, 'drive_upload_init', { name: 'b', size_bytes: b.length });
    expect(initB.statusCode).toBe(200);
    await sendAll(t, small.headers, initA.json.data.upload_token, a);
    await sendAll(t, small.headers, initB.json.data.upload_token, b);
    // Completing turns the reservation into the file (not counted twice).
    expect((await action(t, small.headers, 'drive_upload_complete', { upload_token: initA.json.data.upload_token })).statusCode).toBe(200);
    // Init fails fast on stored plus reserved bytes: 60,000 stored, 30,000 reserved.
    const fast = await action(t, small.headers, 'drive_upload_init', { name: 'c', size_bytes: 20_000 });
    expect(fast.json.data).toMatchObject({ reason: 'quota_exceeded', used_bytes: 90_000 });

    // The plan shrinks while B is open: its completion is refused and the upload kept.
    const tierOf = async (userId: number) =>
      (await t.services.db.selectFrom('grm_group_members').select('grm_sbt_subscription_tier_id').where('grm_foreign_key_id', '=', userId).where('grm_sbt_subscription_tier_id', 'is not', null).executeTakeFirstOrThrow()).grm_sbt_subscription_tier_id!;
    const tight = await member(t, { ...PLAN, drive_storage_bytes: 80_000, drive_max_file_bytes: 70_000 });
    await t.services.tiers.membership.assignManually(small.userId, await tierOf(tight.userId), null);
    const over = await action(t, small.headers, 'drive_upload_complete', { upload_token: initB.json.data.upload_token });
    expect(over.statusCode).toBe(422);
    expect(over.json.data).toMatchObject({ reason: 'quota_exceeded', used_bytes: 60_000, storage_bytes: 80_000 });

    // A bigger plan, and the kept upload completes.
    const roomy = await member(t, { ...PLAN, drive_storage_bytes: 1_000_000, drive_max_file_bytes: 500_000 });
    await t.services.tiers.membership.assignManually(small.userId, await tierOf(roomy.userId), null);
    const retried = await action(t, small.headers, 'drive_upload_complete', { upload_token: initB.json.data.upload_token });
    expect(retried.statusCode).toBe(200);
    expect((await driveFiles(small.userId)).length).toBe(2);
  });

  it("short-circuits by dedup only on the caller's own content", async () => {
    const owner = await member(t, PLAN);
    const other = await member(t, PLAN);
    const bytes = content(5000, 'dedup');
    const first = await upload(t, owner.headers, bytes, { name: 'one.txt', mime_type: 'text/plain' });
    expect(first.statusCode).toBe(200);
    const blobs = await blobCount();

    // Someone else's init with that hash is an ordinary upload: no oracle, nothing made.
    const theirs = await action(t, other.headers, 'drive_upload_init', { name: 'guess.txt', size_bytes: bytes.length, sha256: sha256(bytes) });
    expect(theirs.statusCode).toBe(200);
    expect(theirs.json.data.deduped).toBeUndefined();
    expect(theirs.json.data.upload_token).toMatch(/^[0-9a-f]{64}$/);
    expect(await driveFiles(other.userId)).toEqual([]);

    const mine = await action(t, owner.headers, 'drive_upload_init', { name: 'two.txt', size_bytes: bytes.length, sha256: sha256(bytes) });
    expect(mine.statusCode).toBe(200);
    expect(mine.json.data.deduped).toBe(true);
    expect(mine.json.data.file).toMatchObject({ name: 'two.txt', size_bytes: 5000, sha256: sha256(bytes), mime_type: 'text/plain', owner_user_id: owner.userId });
    expect(mine.json.data.file.file_id).not.toBe(first.json.data.file.file_id);
    expect(await blobCount()).toBe(blobs);
    const blob = await t.services.db.selectFrom('fbb_file_blobs').select('fbb_refcount').where('fbb_sha256', '=', sha256(bytes)).executeTakeFirstOrThrow();
    expect(blob.fbb_refcount).toBe(2);

    // The other member's own upload of the same bytes reuses the stored blob (disk), billed to them (quota).
    await sendAll(t, other.headers, theirs.json.data.upload_token, bytes);
    const done = await action(t, other.headers, 'drive_upload_complete', { upload_token: theirs.json.data.upload_token });
    expect(done.statusCode).toBe(200);
    expect(await blobCount()).toBe(blobs);
  });

  it('replays a completion sent again with the same Idempotency-Key: the same file, made once', async () => {
    const m = await member(t, PLAN);
    const bytes = content(CHUNK * 2, 'idem');
    const init = await action(t, m.headers, 'drive_upload_init', { name: 'idem.bin', size_bytes: bytes.length });
    await sendAll(t, m.headers, init.json.data.upload_token, bytes);
    const key = { 'idempotency-key': 'complete-1' };
    const first = await action(t, m.headers, 'drive_upload_complete', { upload_token: init.json.data.upload_token }, key);
    const replay = await action(t, m.headers, 'drive_upload_complete', { upload_token: init.json.data.upload_token }, key);
    expect(first.statusCode).toBe(200);
    expect(replay.statusCode).toBe(200);
    expect(replay.headers['idempotency-replayed']).toBe('true');
    expect(replay.json).toEqual(first.json);
    expect((await driveFiles(m.userId)).map((f) => f.fil_file_id)).toEqual([first.json.data.file.file_id]);
  });

  it("prunes versions beyond the tier's drive_versioning_depth and frees what they held", async () => {
    const m = await member(t, { ...PLAN, drive_versioning_depth: 2 });
    const versions = [0, 1, 2, 3].map((i) => content(1000 + i, `version${i}`));
    const made = await upload(t, m.headers, versions[0]!, { name: 'doc.txt' });
    const fileId = made.json.data.file.file_id;
    for (const v of versions.slice(1)) {
      const res = await upload(t, m.headers, v, { file_id: fileId });
      expect(res.statusCode).toBe(200);
      expect(res.json.data.new_version).toBe(true);
    }
    const listed = await action(t, m.headers, 'drive_versions', { file_id: fileId });
    expect(listed.statusCode).toBe(200);
    const kept = (listed.json.data.versions ?? listed.json.data) as Array<{ sha256: string }>;
    expect(kept.map((v) => v.sha256)).toEqual([sha256(versions[2]!), sha256(versions[1]!)]);
    const file = await t.services.db.selectFrom('fil_files').innerJoin('fbb_file_blobs', 'fbb_file_blob_id', 'fil_fbb_file_blob_id').select(['fbb_sha256', 'fil_name']).where('fil_file_id', '=', fileId).executeTakeFirstOrThrow();
    expect(file).toEqual({ fbb_sha256: sha256(versions[3]!), fil_name: 'doc.txt' });
    const pruned = await t.services.db.selectFrom('fbb_file_blobs').select(['fbb_refcount', 'fbb_storage_key']).where('fbb_sha256', '=', sha256(versions[0]!)).executeTakeFirstOrThrow();
    expect(pruned.fbb_refcount).toBe(0);
    const kinds = await t.services.db.selectFrom('fch_file_changes').select('fch_kind').where('fch_usr_user_id', '=', m.userId).orderBy('fch_file_change_id').execute();
    expect(kinds.map((k) => k.fch_kind)).toEqual(['create', 'version', 'version', 'version']);

    // The daily reconcile leaves young orphans alone, then deletes them (row and bytes).
    const task = reconcileDriveUsageTask(t.services.driveStorage);
    expect(await task.run({ db: t.services.db, clock: t.clock })).toEqual({ corrected_refcounts: 0, released_deleted_files: 0, deleted_blobs: 0 });
    t.clock.advanceSeconds(2 * 3600);
    expect(await task.run({ db: t.services.db, clock: t.clock })).toEqual({ corrected_refcounts: 0, released_deleted_files: 0, deleted_blobs: 1 });
    expect(await t.services.db.selectFrom('fbb_file_blobs').select('fbb_file_blob_id').where('fbb_sha256', '=', sha256(versions[0]!)).executeTakeFirst()).toBeUndefined();
  });

  it('takes mail_import_archive uploads without quota or folders and returns the plain file', async () => {
    const tierless = await member(t, null);
    const bytes = content(2000, 'archive');
    await t.services.plugins.setActive('mailbox', true);
    const refusedFolder = await action(t, tierless.headers, 'drive_upload_init', { purpose: 'mail_import_archive', size_bytes: 10, folder_id: 1 });
    expect(refusedFolder.statusCode).toBe(422);
    expect(refusedFolder.json.errortype).toBe('ValidationError');
    const done = await upload(t, tierless.headers, bytes, { purpose: 'mail_import_archive', name: 'mail.mbox', mime_type: 'application/mbox' });
    expect(done.statusCode).toBe(200);
    expect(done.json.data).toEqual({ file: { id: expect.any(Number), name: 'mail.mbox', size_bytes: 2000, mime_type: 'application/mbox', source: 'mail_import_archive' } });
    const unknown = await action(t, tierless.headers, 'drive_upload_init', { purpose: 'avatar', size_bytes: 10 });
    expect(unknown.statusCode).toBe(422);
    expect(unknown.json.errortype).toBe('ValidationError');
  });

  it('checks each chunk: Content-Range, size cap, content type, owner, and cuts off a stalled chunk', async () => {
    const m = await member(t, PLAN);
    const stranger = await member(t, PLAN);
    const bytes = content(CHUNK + 100, 'chunks');
    const token = (await action(t, m.headers, 'drive_upload_init', { name: 'c.bin', size_bytes: bytes.length })).json.data.upload_token;
    const url = `/api/v1/drive_upload/${token}`;

    const noRange = await t.request({ method: 'PUT', url, headers: { ...m.headers, 'content-type': 'application/octet-stream' }, payload: bytes.subarray(0, 10) });
    expect(noRange.statusCode).toBe(422);
    expect(noRange.json.validation_errors).toEqual({ 'Content-Range': 'is required: bytes <start>-<end>/<total>' });
    const wrongTotal = await putChunk(t, m.headers, token, bytes.subarray(0, 10), 0, 99);
    expect(wrongTotal.json.validation_errors['Content-Range']).toBe(`total must be the upload's size, ${bytes.length}`);
    const tooBig = await t.request({
      method: 'PUT',
      url,
      headers: { ...m.headers, 'content-type': 'application/octet-stream', 'content-range': `bytes 0-${CHUNK}/${bytes.length}` },
      payload: bytes.subarray(0, CHUNK + 1),
    });
    expect(tooBig.statusCode).toBe(413);
    expect(tooBig.json.errortype).toBe('TransactionError');
    const json = await t.request({ method: 'PUT', url, headers: { ...m.headers, 'content-range': `bytes 0-1/${bytes.length}` }, payload: { a: 1 } });
    expect(json.statusCode).toBe(415);
    expect((await putChunk(t, stranger.headers, token, bytes.subarray(0, 10), 0, bytes.length)).statusCode).toBe(404);
    expect((await t.request({ method: 'GET', url, headers: stranger.headers })).statusCode).toBe(404);
    expect((await t.request({ method: 'GET', url: `/api/v1/drive_upload/${'0'.repeat(64)}`, headers: m.headers })).statusCode).toBe(404);
    const anonymous = await t.request({ method: 'GET', url });
    expect(anonymous.statusCode).toBe(400);
    expect(anonymous.json.errortype).toBe('AuthenticationError');

    // A body shorter than its Content-Range is discarded.
    const short = await t.request({
      method: 'PUT',
      url,
      headers: { ...m.headers, 'content-type': 'application/octet-stream', 'content-range': `bytes 0-99/${bytes.length}`, 'content-length': '50' },
      payload: bytes.subarray(0, 50),
    });
    expect(short.statusCode).toBe(422);

    // A chunk that stalls is cut off and its partial bytes discarded.
    chunkTimings.stallMs = 300;
    try {
      const body = new PassThrough();
      body.write(bytes.subarray(0, 1000));
      const stalled = await t.request({
        method: 'PUT',
        url,
        headers: { ...m.headers, 'content-type': 'application/octet-stream', 'content-range': `bytes 0-${CHUNK - 1}/${bytes.length}` },
        payload: body,
      });
      expect(stalled.statusCode).toBe(408);
      expect(stalled.json.errortype).toBe('TransactionError');
    } finally {
      chunkTimings.stallMs = 60_000;
    }
    const after = await t.request({ method: 'GET', url, headers: m.headers });
    expect(after.json.data.received_bytes).toBe(0);
    // The lease was given back: the next chunk goes straight in.
    expect((await putChunk(t, m.headers, token, bytes.subarray(0, CHUNK), 0, bytes.length)).statusCode).toBe(200);
  });

  it('meters chunk requests in the api_upload bucket, not the general one', async () => {
    const m = await member(t, PLAN);
    const token = (await action(t, m.headers, 'drive_upload_init', { name: 'r.bin', size_bytes: 10 })).json.data.upload_token;
    await t.services.settings.set('api_upload_rate_limit_requests', 3);
    await t.services.settings.set('api_rate_limit_requests', 2);
    try {
      // From an address of its own: three chunk requests pass although the general limit is two.
      const get = () => t.request({ method: 'GET', url: `/api/v1/drive_upload/${token}`, headers: m.headers, remoteAddress: '10.9.8.7' });
      for (let i = 0; i < 3; i++) expect((await get()).statusCode).toBe(200);
      const limited = await get();
      expect(limited.statusCode).toBe(429);
      expect(limited.json.errortype).toBe('RateLimitError');
      expect(limited.json.data).toMatchObject({ limit: 3, count: 3 });
    } finally {
      await t.services.settings.set('api_upload_rate_limit_requests', 10_000);
      await t.services.settings.set('api_rate_limit_requests', 1000);
    }
  });

  it('purges uploads idle for 24 hours with their part files', async () => {
    const m = await member(t, PLAN);
    const bytes = content(CHUNK + 5, 'idle');
    const token = (await action(t, m.headers, 'drive_upload_init', { name: 'idle.bin', size_bytes: bytes.length })).json.data.upload_token;
    await putChunk(t, m.headers, token, bytes.subarray(0, CHUNK), 0, bytes.length);
    const partsBefore = (await partFiles()).length;
    t.clock.advanceSeconds(24 * 3600 + 1);
    const expired = await putChunk(t, m.headers, token, bytes.subarray(CHUNK), CHUNK, bytes.length);
    expect(expired.statusCode).toBe(404);
    expect(expired.json.data.reason).toBe('upload_expired');
    expect((await action(t, m.headers, 'drive_upload_complete', { upload_token: token })).json.data.reason).toBe('upload_expired');
    const result = await purgeDriveUploadsTask(t.services.driveStorage).run({ db: t.services.db, clock: t.clock });
    expect(result.deleted_uploads).toBeGreaterThanOrEqual(1);
    expect((await partFiles()).length).toBeLessThan(partsBefore);
    expect((await action(t, m.headers, 'drive_upload_complete', { upload_token: token })).json.data.reason).toBe('not_found');
  });

  it('answers 403 on every upload endpoint while drive_active is off', async () => {
    const m = await member(t, PLAN);
    const token = (await action(t, m.headers, 'drive_upload_init', { name: 'x', size_bytes: 10 })).json.data.upload_token;
    await t.services.settings.set('drive_active', false);
    try {
      for (const res of [
        await action(t, m.headers, 'drive_upload_init', { name: 'x', size_bytes: 10 }),
        await action(t, m.headers, 'drive_upload_complete', { upload_token: token }),
        await putChunk(t, m.headers, token, content(10), 0, 10),
        await t.request({ method: 'GET', url: `/api/v1/drive_upload/${token}`, headers: m.headers }),
        await t.request({ method: 'GET', url: `/api/v1/drive_upload/${token}` }),
      ]) {
        expect(res.statusCode).toBe(403);
        expect(res.json.errortype).toBe('ActionError');
      }
    } finally {
      await t.services.settings.set('drive_active', true);
    }
  });
});
