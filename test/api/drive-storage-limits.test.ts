import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reconcileDriveUsageTask } from '../../src/drive/reconcile-usage-task.js';
import { action, content, createDriveApp, member, PLAN, sendAll, upload, type DriveApp } from './drive-upload-fixture.js';

// Issue 35 item 5: every stored byte counts against some limit and goes when its row goes. Open uploads
// reserve their size; a purpose exists only while its owner is active and has its own per-member limit;
// CRUD does not write or delete Drive's files; a deleted row's blob is released and swept.

describe('storage limits', () => {
  let t: DriveApp;
  beforeAll(async () => {
    t = await createDriveApp({ activePlugins: ['mailbox'] });
  });
  afterAll(async () => {
    await t?.close();
  });

  const MB = 1_000_000;
  const TIGHT = { ...PLAN, drive_storage_bytes: MB, drive_max_file_bytes: MB };

  it('an open upload reserves its size: five 900 KB inits against a 1 MB quota, only the first opens; expiry gives the room back', async () => {
    const m = await member(t, TIGHT);
    const answers = [];
    for (let i = 0; i < 5; i++) answers.push(await action(t, m.headers, 'drive_upload_init', { name: `f${i}`, size_bytes: 900_000 }));
    expect(answers.map((a) => a.statusCode)).toEqual([200, 422, 422, 422, 422]);
    expect(answers[1]!.json.errortype).toBe('ActionError');
    expect(answers[1]!.json.data).toEqual({ reason: 'quota_exceeded', size_bytes: 900_000, max_file_bytes: MB, storage_bytes: MB, used_bytes: 900_000 });
    // What is left beside the reservation still opens.
    expect((await action(t, m.headers, 'drive_upload_init', { name: 'small', size_bytes: 100_000 })).statusCode).toBe(200);
    // An upload left idle 24 h is expired and reserves nothing any more.
    t.clock.advanceSeconds(24 * 3600 + 1);
    expect((await action(t, m.headers, 'drive_upload_init', { name: 'later', size_bytes: 900_000 })).statusCode).toBe(200);
  });

  it('two inits racing for the last bytes: only one opens', async () => {
    const m = await member(t, TIGHT);
    const init = (i: number) => action(t, m.headers, 'drive_upload_init', { name: `race${i}`, size_bytes: 600_000 });
    let answers: Awaited<ReturnType<typeof init>>[];
    if (process.env.DATABASE_URL) {
      // The interleaving: both inits have read the usage before either has written its upload. A
      // transaction of the test's own holds fup_file_uploads in SHARE mode (reads pass, inserts wait) until
      // both are waiting on a lock: without the owner's quota lock both would have passed the check and
      // wait at the insert; with it the second waits for the first to commit, then sees its reservation.
      let racing!: Promise<Awaited<ReturnType<typeof init>>[]>;
      await t.services.db.transaction().execute(async (trx) => {
        await sql`lock table fup_file_uploads in share mode`.execute(trx);
        racing = Promise.all([init(1), init(2)]);
        await expect
          .poll(async () => {
            const { rows } = await sql<{ n: number }>`select count(*)::int as n from pg_locks
              where not granted and database = (select oid from pg_database where datname = current_database())`.execute(t.services.db);
            return rows[0]!.n;
          }, { timeout: 15_000, interval: 20 })
          .toBe(2);
      });
      answers = await racing;
    } else {
      // The embedded database runs one statement at a time; the inits are still all in flight at once.
      answers = await Promise.all([1, 2, 3, 4].map(init));
    }
    const statuses = answers.map((a) => a.statusCode).sort();
    expect(statuses).toEqual([200, ...statuses.slice(1).map(() => 422)]);
    for (const a of answers.filter((x) => x.statusCode === 422)) expect(a.json.data.reason).toBe('quota_exceeded');
    const open = await t.services.db.selectFrom('fup_file_uploads').select('fup_name').where('fup_usr_user_id', '=', m.userId).execute();
    expect(open).toHaveLength(1);
  });

  it("an upload into a shared folder reserves against the folder owner's quota", async () => {
    const owner = await member(t, TIGHT);
    const editor = await member(t, PLAN);
    const folder = await action(t, owner.headers, 'drive_folder_create', { name: 'team' });
    const folderId = folder.json.data.folder.folder_id as number;
    const editorEmail = (await t.services.db.selectFrom('usr_users').select('usr_email').where('usr_user_id', '=', editor.userId).executeTakeFirstOrThrow()).usr_email;
    expect((await action(t, owner.headers, 'drive_share_sync', { folder_id: folderId, grants: { [editorEmail]: 'editor' } })).statusCode).toBe(200);
    expect((await action(t, editor.headers, 'drive_upload_init', { name: 'e', size_bytes: 700_000, folder_id: folderId })).statusCode).toBe(200);
    const own = await action(t, owner.headers, 'drive_upload_init', { name: 'o', size_bytes: 400_000 });
    expect(own.statusCode).toBe(422);
    expect(own.json.data).toMatchObject({ reason: 'quota_exceeded', used_bytes: 700_000 });
  });

  it('mail_import_archive exists only while the mailbox plugin is active, and is bounded per member in total', async () => {
    const m = await member(t, null);
    await t.services.settings.set('upload_mail_import_archive_max_bytes', 5000);
    try {
      await t.services.plugins.setActive('mailbox', false);
      const off = await action(t, m.headers, 'drive_upload_init', { purpose: 'mail_import_archive', name: 'a.mbox', size_bytes: 10 });
      expect(off.statusCode).toBe(422);
      expect(off.json.errortype).toBe('ValidationError');
      expect(off.json.validation_errors).toEqual({ purpose: 'must be one of drive, member_import' });
      // An upload opened while the plugin was on cannot complete after it went off.
      await t.services.plugins.setActive('mailbox', true);
      const opened = await action(t, m.headers, 'drive_upload_init', { purpose: 'mail_import_archive', name: 'x.mbox', size_bytes: 100 });
      expect(opened.statusCode).toBe(200);
      await sendAll(t, m.headers, opened.json.data.upload_token, content(100, 'x'));
      await t.services.plugins.setActive('mailbox', false);
      const late = await action(t, m.headers, 'drive_upload_complete', { upload_token: opened.json.data.upload_token });
      expect(late.statusCode).toBe(422);
      expect(late.json.data.reason).toBe('not_found');
      await t.services.plugins.setActive('mailbox', true);

      // Held archives and open archive uploads share one limit: 100 reserved + 3000 held, then 2000 more is over.
      const done = await upload(t, m.headers, content(3000, 'archive'), { purpose: 'mail_import_archive', name: 'a.mbox' });
      expect(done.statusCode).toBe(200);
      const over = await action(t, m.headers, 'drive_upload_init', { purpose: 'mail_import_archive', name: 'b.mbox', size_bytes: 2000 });
      expect(over.statusCode).toBe(422);
      expect(over.json.data).toEqual({ reason: 'quota_exceeded', size_bytes: 2000, storage_bytes: 5000, used_bytes: 3100 });

      // Deleting the archive (CRUD) frees its room; the reconcile task gives its blob back and sweeps the bytes.
      const fileId = done.json.data.file.id as number;
      const del = await t.request({ method: 'DELETE', url: `/api/v1/File/${fileId}`, headers: m.headers });
      expect(del.statusCode).toBe(200);
      expect((await action(t, m.headers, 'drive_upload_init', { purpose: 'mail_import_archive', name: 'b.mbox', size_bytes: 2000 })).statusCode).toBe(200);
      const blobId = (await t.services.db.selectFrom('fil_files').select('fil_fbb_file_blob_id').where('fil_file_id', '=', fileId).executeTakeFirstOrThrow()).fil_fbb_file_blob_id!;
      const task = reconcileDriveUsageTask(t.services.driveStorage);
      expect(await task.run({ db: t.services.db, clock: t.clock })).toMatchObject({ released_deleted_files: 1 });
      t.clock.advanceSeconds(2 * 3600);
      await task.run({ db: t.services.db, clock: t.clock });
      expect(await t.services.db.selectFrom('fbb_file_blobs').select('fbb_file_blob_id').where('fbb_file_blob_id', '=', blobId).executeTakeFirst()).toBeUndefined();
    } finally {
      await t.services.plugins.setActive('mailbox', true);
      await t.services.settings.set('upload_mail_import_archive_max_bytes', 4 * 1024 * 1024 * 1024);
    }
  });

  it("CRUD neither changes nor deletes a Drive file: 403 naming the drive actions, the file and its quota untouched", async () => {
    const m = await member(t, PLAN);
    const done = await upload(t, m.headers, content(5000, 'crud'), { name: 'kept.txt' });
    const fileId = done.json.data.file.file_id as number;
    const del = await t.request({ method: 'DELETE', url: `/api/v1/File/${fileId}`, headers: m.headers });
    expect(del.statusCode).toBe(403);
    expect(del.json.errortype).toBe('AuthenticationError');
    expect(del.json.error).toBe('Drive files are changed with the drive actions (drive_rename, drive_move, drive_trash, drive_delete_forever), not over CRUD');
    const put = await t.request({ method: 'PUT', url: `/api/v1/File/${fileId}?fil_title=renamed`, headers: m.headers });
    expect(put.statusCode).toBe(403);
    const row = await t.services.db.selectFrom('fil_files').select(['fil_delete_time', 'fil_fbb_file_blob_id']).where('fil_file_id', '=', fileId).executeTakeFirstOrThrow();
    expect(row).toEqual({ fil_delete_time: null, fil_fbb_file_blob_id: expect.any(Number) });
    // Still listed and still billed.
    const listed = await action(t, m.headers, 'drive_list', {});
    expect(listed.json.data.files.map((f: { file_id: number }) => f.file_id)).toContain(fileId);
    // The read is unchanged, and does not show the bookkeeping column.
    const read = await t.request({ method: 'GET', url: `/api/v1/File/${fileId}`, headers: m.headers });
    expect(read.statusCode).toBe(200);
    expect(read.json.data).not.toHaveProperty('fil_source');
    expect(read.json.data.fil_title).toBeNull();

    // A plain CRUD file (no upload behind it) is still the owner's to change and delete.
    const made = await t.request({ method: 'POST', url: '/api/v1/File', headers: { ...m.headers, 'content-type': 'application/x-www-form-urlencoded' }, payload: 'fil_title=plain' });
    expect(made.statusCode).toBe(200);
    const plain = await t.request({ method: 'DELETE', url: `/api/v1/File/${made.json.data.fil_file_id}`, headers: m.headers });
    expect(plain.statusCode).toBe(200);
  });
});
