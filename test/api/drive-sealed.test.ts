import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { InjectOptions } from 'fastify';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisVaultWindowStore } from '../../src/accounts/vault/window-store.js';
import { FRAME_BYTES, sealedSize } from '../../src/drive/sealed-blob.js';
import { buildApp } from '../../src/boot/app.js';
import type { TestApp } from '../helpers/app.js';
import { signIn, type WebClient } from '../helpers/browser-session.js';
import { holdRotation, settledOrWaiting } from '../helpers/interleave.js';
import { action, content, createDriveApp, memberWithLogin, PLAN, sha256, type DriveApp } from './drive-upload-fixture.js';

// Sealed Drive folders (DESIGN 10 "First consumer", issue 27): names and bytes of files in a sealed folder
// are sealed under the owner's vault; locked reads are placeholders, locked downloads 423, sealed content
// never leaves through links, grants, moves or dedup, and a rotation keeps it readable. Every request goes
// through an app whose logger writes into `logLines`, so the key-material scan covers the logs too.

const ORIGIN = 'https://members.example.com';
const CHUNK = 64 * 1024;

let t: DriveApp;
let web: TestApp;
const logLines: string[] = [];

beforeAll(async () => {
  t = await createDriveApp({ config: { baseUrl: ORIGIN } });
  const logged = await buildApp(t.services, { logger: { level: 'trace', stream: { write: (line: string) => logLines.push(line) } } });
  await logged.ready();
  web = Object.assign(Object.create(t) as TestApp, {
    app: logged,
    async request(o: InjectOptions) {
      const res = await logged.inject(o);
      let json: unknown;
      try {
        json = res.json();
      } catch {
        json = undefined;
      }
      return Object.assign(res, { json });
    },
  });
  const close = t.close;
  t.close = async () => {
    await logged.close();
    await close();
  };
});
afterAll(async () => t?.close());

const post = (c: WebClient, name: string, payload: Record<string, unknown> = {}, headers?: Record<string, string>) =>
  c.api('POST', `/api/v1/action/${name}`, { payload, ...(headers ? { headers } : {}) });

/** A member on a Drive plan, signed in on the website, with a vault set up (its window open) unless told. */
async function vaultMember(opts: { vault?: boolean } = {}) {
  const m = await memberWithLogin(t, PLAN);
  const c = await signIn(web, m.email, m.password);
  let codes: string[] = [];
  if (opts.vault !== false) {
    expect((await post(c, 'vault_setup_options', { password: m.password })).statusCode).toBe(200);
    const setup = await post(c, 'vault_setup_verify', { acknowledge_loss: true });
    expect(setup.statusCode).toBe(200);
    codes = setup.json.data.recovery_codes;
  }
  return { ...m, c, codes };
}

/** Upload through the browser session: init, chunks, complete. */
async function webUpload(c: WebClient, bytes: Buffer, init: Record<string, unknown>) {
  const opened = await post(c, 'drive_upload_init', { size_bytes: bytes.length, ...init });
  if (opened.statusCode !== 200 || opened.json.data.deduped) return opened;
  const token = opened.json.data.upload_token as string;
  for (let start = 0; start < bytes.length; start += CHUNK) {
    const part = bytes.subarray(start, start + CHUNK);
    const res = await c.api('PUT', `/api/v1/drive_upload/${token}`, {
      payload: part,
      headers: { 'content-type': 'application/octet-stream', 'content-range': `bytes ${start}-${start + part.length - 1}/${bytes.length}` },
    });
    expect(res.statusCode).toBe(200);
  }
  return post(c, 'drive_upload_complete', { upload_token: token });
}

async function sealedFolder(c: WebClient, name = 'Private') {
  const res = await post(c, 'drive_folder_create', { name, sealed: true });
  expect(res.statusCode).toBe(200);
  return res.json.data.folder.folder_id as number;
}

const lock = async (c: WebClient) => expect((await post(c, 'vault_lock')).json.data.unlocked).toBe(false);
const unlockByCode = async (c: WebClient, password: string, code: string) => expect((await post(c, 'vault_unlock_recovery', { password, code })).statusCode).toBe(200);

async function blobFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) out.push(path.join(entry.parentPath, entry.name));
  }
  return out;
}

describe('sealed folders', () => {
  it('need a set-up vault: 422 ValidationError on sealed', async () => {
    const m = await vaultMember({ vault: false });
    const res = await post(m.c, 'drive_folder_create', { name: 'Private', sealed: true });
    expect([res.statusCode, res.json.errortype, Object.keys(res.json.validation_errors)]).toEqual([422, 'ValidationError', ['sealed']]);
    expect(res.json.validation_errors.sealed).toMatch(/vault/);
    const plain = await post(m.c, 'drive_folder_create', { name: 'Plain' });
    expect(plain.statusCode).toBe(200);
    expect(plain.json.data.folder).not.toHaveProperty('sealed');
  });

  it('seal names and bytes: readable while unlocked, placeholders and 423 while locked, readable again after unlock', async () => {
    const m = await vaultMember();
    const folderId = await sealedFolder(m.c);
    const inner = await post(m.c, 'drive_folder_create', { name: 'Inner', parent_id: folderId });
    expect(inner.json.data.folder).toMatchObject({ name: 'Inner', sealed: true });

    const bytes = content(3 * FRAME_BYTES + 1234, 'sealed-bytes');
    const name = 'tax return 2025.pdf';
    const done = await webUpload(m.c, bytes, { name, folder_id: folderId, mime_type: 'application/pdf', sha256: sha256(bytes) });
    expect(done.statusCode).toBe(200);
    const file = done.json.data.file;
    expect(file).toMatchObject({ name, sealed: true, content_locked: false, sha256: null, size_bytes: bytes.length, folder_id: folderId });

    // At rest: no name in the row, and the blob is ciphertext of the sealed size.
    const row = await t.services.db.selectFrom('fil_files').selectAll().where('fil_file_id', '=', file.file_id).executeTakeFirstOrThrow();
    expect(row.fil_name).toBeNull();
    expect(row.fil_sealed_name).not.toContain('tax');
    const blob = await t.services.db.selectFrom('fbb_file_blobs').selectAll().where('fbb_file_blob_id', '=', row.fil_fbb_file_blob_id!).executeTakeFirstOrThrow();
    expect(Number(blob.fbb_size_bytes)).toBe(sealedSize(bytes.length));
    expect(blob.fbb_sha256).not.toBe(sha256(bytes));
    const stored = await readFile(path.join(t.dataDir, 'blobs', blob.fbb_storage_key));
    expect(stored.length).toBe(sealedSize(bytes.length));
    expect(stored.includes(bytes.subarray(0, 64))).toBe(false);

    // Unlocked: the listing shows the name, the download is the plaintext, ranges cross frame boundaries.
    const listed = await post(m.c, 'drive_list', { folder_id: folderId, numperpage: 10 });
    expect(listed.json.data).not.toHaveProperty('locked');
    expect(listed.json.data.files[0]).toMatchObject({ name, content_locked: false });
    const got = await m.c.get(`/drive/file/${file.file_id}`);
    expect(got.statusCode).toBe(200);
    expect(got.rawPayload.equals(bytes)).toBe(true);
    expect(got.headers['content-disposition']).toContain('tax%20return%202025.pdf');
    expect(got.headers['cache-control']).toBe('no-store');
    const range = await m.c.get(`/drive/file/${file.file_id}`, { range: `bytes=${FRAME_BYTES - 10}-${2 * FRAME_BYTES + 9}` });
    expect(range.statusCode).toBe(206);
    expect(range.rawPayload.equals(bytes.subarray(FRAME_BYTES - 10, 2 * FRAME_BYTES + 10))).toBe(true);
    const tail = await m.c.get(`/drive/file/${file.file_id}`, { range: 'bytes=-100' });
    expect(tail.rawPayload.equals(bytes.subarray(bytes.length - 100))).toBe(true);

    // Locked: placeholders (never an error), 423 on the bytes, writes refused before any byte is taken.
    await lock(m.c);
    const lockedList = await post(m.c, 'drive_list', { folder_id: folderId, numperpage: 10 });
    expect(lockedList.statusCode).toBe(200);
    expect(lockedList.json.data.locked).toBe(true);
    expect(lockedList.json.data.files[0]).toMatchObject({ file_id: file.file_id, name: null, sealed: true, content_locked: true, size_bytes: bytes.length });
    // The folder's own name is sealed too (issue 35).
    expect(lockedList.json.data.folders[0]).toMatchObject({ folder_id: inner.json.data.folder.folder_id, name: null, sealed: true, content_locked: true });
    const byKey = await action(t, m.headers, 'drive_list', { folder_id: folderId, numperpage: 10 });
    expect(byKey.json.data.files[0]).toMatchObject({ name: null, content_locked: true });
    const refused = await m.c.get(`/drive/file/${file.file_id}`);
    expect(refused.statusCode).toBe(423);
    expect(refused.body).toContain('/profile/security');
    expect(refused.rawPayload.includes(bytes.subarray(0, 64))).toBe(false);
    const init = await post(m.c, 'drive_upload_init', { name: 'more.txt', size_bytes: 5, folder_id: folderId });
    expect([init.statusCode, init.json.errortype, init.json.data.reason]).toEqual([422, 'ActionError', 'vault_locked']);
    const initByKey = await action(t, m.headers, 'drive_upload_init', { name: 'more.txt', size_bytes: 5, folder_id: folderId });
    expect([initByKey.statusCode, initByKey.json.data.reason]).toEqual([422, 'vault_locked']);
    const rename = await post(m.c, 'drive_rename', { file_id: file.file_id, name: 'x.pdf' });
    expect([rename.statusCode, rename.json.data.reason]).toEqual([422, 'vault_locked']);

    // The page shows a locked placeholder and the way to unlock.
    const page = await m.c.get(`/drive?folder=${folderId}`);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('id="vault-prompt"');
    expect(page.body).toContain('href="/profile/security#vault"');
    expect(page.body).toContain('Locked file');
    expect(page.body).not.toContain('tax return');
    expect(page.body).not.toContain('id="upload-input"');

    await unlockByCode(m.c, m.password, m.codes[0]!);
    const again = await m.c.get(`/drive/file/${file.file_id}`);
    expect(again.statusCode).toBe(200);
    expect(again.rawPayload.equals(bytes)).toBe(true);
    expect((await m.c.get(`/drive?folder=${folderId}`)).body).toContain('tax return 2025.pdf');
  });

  it('are the owner\'s alone: another member gets 404, a grant or a public link is refused with reason sealed', async () => {
    const m = await vaultMember();
    const folderId = await sealedFolder(m.c);
    const file = (await webUpload(m.c, content(100, 'mine'), { name: 'mine.txt', folder_id: folderId })).json.data.file;
    const other = await memberWithLogin(t, PLAN);
    const otherWeb = await signIn(web, other.email, other.password);
    expect((await otherWeb.get(`/drive/file/${file.file_id}`)).statusCode).toBe(404);
    for (const target of [{ file_id: file.file_id }, { folder_id: folderId }]) {
      const grant = await post(m.c, 'drive_share_sync', { ...target, grants: { [String(other.userId)]: 'viewer' } });
      expect([grant.statusCode, grant.json.errortype, grant.json.data.reason]).toEqual([422, 'ActionError', 'sealed']);
    }
    expect((await post(m.c, 'drive_share_sync', { file_id: file.file_id, grants: {} })).statusCode).toBe(200);
    const link = await post(m.c, 'drive_link_create', { file_id: file.file_id });
    expect([link.statusCode, link.json.errortype, link.json.data.reason]).toEqual([422, 'ActionError', 'sealed']);
    expect(link.json.error).toMatch(/public link/);
  });

  it('keep their side of the boundary on moves, and dedup never crosses it', async () => {
    const m = await vaultMember();
    const folderId = await sealedFolder(m.c);
    const plainFolder = (await post(m.c, 'drive_folder_create', { name: 'Plain' })).json.data.folder.folder_id;
    const bytes = content(5000, 'twice');
    const plain = await webUpload(m.c, bytes, { name: 'plain.bin', sha256: sha256(bytes) });
    expect(plain.json.data.file.sha256).toBe(sha256(bytes));
    // Same content into the sealed folder: no dedup short-circuit, its own ciphertext blob.
    const sealedInit = await post(m.c, 'drive_upload_init', { name: 'copy.bin', size_bytes: bytes.length, sha256: sha256(bytes), folder_id: folderId });
    expect(sealedInit.json.data.deduped).toBeUndefined();
    expect(sealedInit.json.data.upload_token).toMatch(/^[0-9a-f]{64}$/);
    const sealedFile = (await webUpload(m.c, bytes, { name: 'copy.bin', sha256: sha256(bytes), folder_id: folderId })).json.data.file;
    const blobOf = async (id: number) => (await t.services.db.selectFrom('fil_files').select('fil_fbb_file_blob_id').where('fil_file_id', '=', id).executeTakeFirstOrThrow()).fil_fbb_file_blob_id;
    expect(await blobOf(sealedFile.file_id)).not.toBe(await blobOf(plain.json.data.file.file_id));
    // And the sealed blob's own hash (the ETag) never dedups a plain upload onto it.
    const etag = (await m.c.get(`/drive/file/${sealedFile.file_id}`)).headers.etag as string;
    const cipherSha = etag.replaceAll('"', '');
    const probe = await post(m.c, 'drive_upload_init', { name: 'probe.bin', size_bytes: sealedSize(bytes.length), sha256: cipherSha });
    expect(probe.json.data.deduped).toBeUndefined();

    const out = await post(m.c, 'drive_move', { file_id: sealedFile.file_id, folder_id: null });
    expect([out.statusCode, out.json.data.reason]).toEqual([422, 'sealed']);
    const into = await post(m.c, 'drive_move', { file_id: plain.json.data.file.file_id, folder_id: folderId });
    expect([into.statusCode, into.json.data.reason]).toEqual([422, 'sealed']);
    const folderInto = await post(m.c, 'drive_move', { folder_id: plainFolder, parent_id: folderId });
    expect([folderInto.statusCode, folderInto.json.data.reason]).toEqual([422, 'sealed']);
    const second = (await post(m.c, 'drive_folder_create', { name: 'Second', sealed: true })).json.data.folder.folder_id;
    const between = await post(m.c, 'drive_move', { file_id: sealedFile.file_id, folder_id: second });
    expect(between.statusCode).toBe(200);
    expect(between.json.data.file).toMatchObject({ name: 'copy.bin', folder_id: second });
    expect((await post(m.c, 'drive_move', { folder_id: second, parent_id: plainFolder })).statusCode).toBe(200);
    expect((await m.c.get(`/drive/file/${sealedFile.file_id}`)).rawPayload.equals(bytes)).toBe(true);
  });

  it('seal new versions under the file\'s key; renames stay sealed; an Idempotency-Key replay is sealed (409 while locked)', async () => {
    const m = await vaultMember();
    const folderId = await sealedFolder(m.c);
    const v1 = content(70_000, 'v1');
    const v2 = content(10, 'v2');
    const file = (await webUpload(m.c, v1, { name: 'notes.txt', folder_id: folderId })).json.data.file;
    const next = await webUpload(m.c, v2, { file_id: file.file_id });
    expect(next.json.data).toMatchObject({ new_version: true, file: { name: 'notes.txt', version_count: 1, sealed: true } });
    expect((await m.c.get(`/drive/file/${file.file_id}`)).rawPayload.equals(v2)).toBe(true);
    const versions = await post(m.c, 'drive_versions', { file_id: file.file_id });
    expect(versions.json.data.versions).toHaveLength(1);
    expect(versions.json.data.versions[0]).toMatchObject({ sha256: null, size_bytes: v1.length });
    const restored = await post(m.c, 'drive_version_restore', { file_id: file.file_id, version_id: versions.json.data.versions[0].version_id });
    expect(restored.statusCode).toBe(200);
    expect((await m.c.get(`/drive/file/${file.file_id}`)).rawPayload.equals(v1)).toBe(true);

    const key = { 'idempotency-key': 'sealed-rename-1' };
    const renamed = await post(m.c, 'drive_rename', { file_id: file.file_id, name: 'secret plans.txt' }, key);
    expect(renamed.json.data.file.name).toBe('secret plans.txt');
    const stored = await t.services.db.selectFrom('aik_api_idempotency_keys').select('aik_body').where('aik_action', '=', 'drive_rename').execute();
    for (const r of stored) expect(r.aik_body ?? '').not.toContain('secret plans');
    const row = await t.services.db.selectFrom('fil_files').select(['fil_name', 'fil_sealed_name']).where('fil_file_id', '=', file.file_id).executeTakeFirstOrThrow();
    expect(row.fil_name).toBeNull();
    await lock(m.c);
    const replay = await post(m.c, 'drive_rename', { file_id: file.file_id, name: 'secret plans.txt' }, key);
    expect([replay.statusCode, replay.json.errortype, replay.json.data.reason]).toEqual([409, 'ActionError', 'sealed_replay_locked']);
    await unlockByCode(m.c, m.password, m.codes[0]!);
    const opened = await post(m.c, 'drive_rename', { file_id: file.file_id, name: 'secret plans.txt' }, key);
    expect(opened.statusCode).toBe(200);
    expect(opened.headers['idempotency-replayed']).toBe('true');
  });
});

describe('sealed folder names and MIME types (issue 35)', () => {
  const OUTER = 'Medical records 2026';
  const INNER = 'Oncology notes';
  const RENAMED = 'Divorce papers';
  const MIME = 'application/x-secret-kind';
  /** Nothing readable of the sealed names or the MIME type in an answer. */
  const noPlain = (body: string) => {
    for (const word of [OUTER, INNER, RENAMED, 'secret-kind']) expect(body).not.toContain(word);
  };

  async function sealedTree(m: Awaited<ReturnType<typeof vaultMember>>) {
    const outer = await sealedFolder(m.c, OUTER);
    const inner = await post(m.c, 'drive_folder_create', { name: INNER, parent_id: outer });
    expect(inner.statusCode).toBe(200);
    const innerId = inner.json.data.folder.folder_id as number;
    const bytes = content(5000, 'mime');
    const done = await webUpload(m.c, bytes, { name: 'scan.bin', folder_id: innerId, mime_type: MIME });
    expect(done.statusCode).toBe(200);
    return { outer, inner: innerId, file: done.json.data.file.file_id as number, bytes };
  }

  it('a locked session sees no folder name or MIME type (API, page, database); an unlocked one sees them', async () => {
    const m = await vaultMember();
    const { outer, inner, file, bytes } = await sealedTree(m);

    // At rest: no name in fol_name, no MIME type in the file row or its blob.
    const db = t.services.db;
    const folders = await db.selectFrom('fol_folders').selectAll().where('fol_folder_id', 'in', [outer, inner]).execute();
    for (const f of folders) {
      expect([f.fol_name, f.fol_is_sealed, typeof f.fol_sealed_key, typeof f.fol_sealed_name]).toEqual([null, true, 'string', 'string']);
      noPlain(JSON.stringify(f));
    }
    const row = await db.selectFrom('fil_files').selectAll().where('fil_file_id', '=', file).executeTakeFirstOrThrow();
    expect([row.fil_mime_type, typeof row.fil_sealed_mime]).toEqual([null, 'string']);
    noPlain(JSON.stringify(row));
    const blob = await db.selectFrom('fbb_file_blobs').select('fbb_mime_type').where('fbb_file_blob_id', '=', row.fil_fbb_file_blob_id!).executeTakeFirstOrThrow();
    expect(blob.fbb_mime_type).toBeNull();

    // Unlocked: real names and MIME type, in the API, the page's breadcrumbs and the download.
    const root = await post(m.c, 'drive_list', { numperpage: 10 });
    expect(root.json.data.folders).toEqual([expect.objectContaining({ folder_id: outer, name: OUTER, sealed: true, content_locked: false })]);
    const inside = await post(m.c, 'drive_list', { folder_id: outer, numperpage: 10 });
    expect(inside.json.data.folders[0]).toMatchObject({ folder_id: inner, name: INNER, content_locked: false });
    const files = await post(m.c, 'drive_list', { folder_id: inner, numperpage: 10 });
    expect(files.json.data.files[0]).toMatchObject({ file_id: file, name: 'scan.bin', mime_type: MIME, content_locked: false });
    const page = await m.c.get(`/drive?folder=${inner}`);
    expect(page.body).toMatch(new RegExp(`id="crumbs">.*${OUTER}.*${INNER}`, 's'));
    const got = await m.c.get(`/drive/file/${file}`);
    expect([got.statusCode, got.headers['content-type']]).toEqual([200, MIME]);
    expect(got.rawPayload.equals(bytes)).toBe(true);

    // Locked: placeholders everywhere.
    await lock(m.c);
    const lockedRoot = await post(m.c, 'drive_list', { numperpage: 10 });
    expect(lockedRoot.json.data).toMatchObject({ locked: true, folders: [{ folder_id: outer, name: null, sealed: true, content_locked: true }] });
    noPlain(lockedRoot.body);
    const lockedInside = await post(m.c, 'drive_list', { folder_id: outer, numperpage: 10 });
    expect(lockedInside.json.data.folders[0]).toMatchObject({ folder_id: inner, name: null, content_locked: true });
    noPlain(lockedInside.body);
    const lockedFiles = await post(m.c, 'drive_list', { folder_id: inner, numperpage: 10 });
    expect(lockedFiles.json.data.files[0]).toMatchObject({ file_id: file, name: null, mime_type: null, content_locked: true });
    noPlain(lockedFiles.body);
    const byKey = await action(t, m.headers, 'drive_list', { numperpage: 10 });
    expect(byKey.json.data.folders[0]).toMatchObject({ name: null, content_locked: true });
    noPlain(byKey.body);
    for (const url of ['/drive', `/drive?folder=${outer}`, `/drive?folder=${inner}`]) {
      const p = await m.c.get(url);
      expect(p.statusCode).toBe(200);
      noPlain(p.body);
    }
    expect((await m.c.get('/drive')).body).toContain('Locked folder');
    expect((await m.c.get(`/drive?folder=${inner}`)).body).toMatch(/id="crumbs">.*Sealed folder.*Sealed folder/s);

    // Renamed while locked (sealing needs only the public key): the answer and the row hold no name.
    const renamed = await post(m.c, 'drive_rename', { folder_id: inner, name: RENAMED });
    expect(renamed.statusCode).toBe(200);
    expect(renamed.json.data.folder).toMatchObject({ folder_id: inner, name: null, content_locked: true });
    noPlain(renamed.body);
    // Moved out of the sealed folder to the root: it stays sealed, and the message names neither folder.
    const moved = await post(m.c, 'drive_move', { folder_id: inner, parent_id: null });
    expect(moved.statusCode).toBe(200);
    expect(moved.json.data.folder).toMatchObject({ parent_id: null, name: null, sealed: true, content_locked: true });
    noPlain(moved.body);
    const afterMove = await db.selectFrom('fol_folders').selectAll().where('fol_folder_id', '=', inner).executeTakeFirstOrThrow();
    expect(afterMove.fol_name).toBeNull();
    noPlain(JSON.stringify(afterMove));
    // And back in: still sealed.
    expect((await post(m.c, 'drive_move', { folder_id: inner, parent_id: outer })).statusCode).toBe(200);

    await unlockByCode(m.c, m.password, m.codes[0]!);
    const reopened = await post(m.c, 'drive_list', { folder_id: outer, numperpage: 10 });
    expect(reopened.json.data.folders[0]).toMatchObject({ folder_id: inner, name: RENAMED, content_locked: false });
    // Another sealed folder with the same name beside it is not refused (its siblings' names are not readable).
    expect((await post(m.c, 'drive_folder_create', { name: RENAMED, parent_id: outer })).statusCode).toBe(200);
  });

  it('an Idempotency-Key replay of a sealed folder answer is sealed: 409 while locked, stored without the name', async () => {
    const m = await vaultMember();
    const key = { 'idempotency-key': 'sealed-folder-1' };
    const made = await post(m.c, 'drive_folder_create', { name: OUTER, sealed: true }, key);
    expect(made.json.data.folder).toMatchObject({ name: OUTER, content_locked: false });
    // Only the data holds the name (the answer's message does not name it).
    const { data: _data, ...rest } = made.json;
    noPlain(JSON.stringify(rest));
    const stored = await t.services.db.selectFrom('aik_api_idempotency_keys').select('aik_body').where('aik_action', '=', 'drive_folder_create').execute();
    for (const r of stored) noPlain(r.aik_body ?? '');
    await lock(m.c);
    const replay = await post(m.c, 'drive_folder_create', { name: OUTER, sealed: true }, key);
    expect([replay.statusCode, replay.json.errortype, replay.json.data.reason]).toEqual([409, 'ActionError', 'sealed_replay_locked']);
    noPlain(replay.body);
  });

  it('the seal_drive_folder_names task seals sealed folders\' names left in clear from before, without the vault open', async () => {
    const m = await vaultMember();
    const outer = await sealedFolder(m.c, OUTER);
    const db = t.services.db;
    const old = await db
      .insertInto('fol_folders')
      .values({ fol_usr_user_id: m.userId, fol_fol_folder_id_parent: outer, fol_name: 'Left in clear', fol_is_sealed: true })
      .returning('fol_folder_id')
      .executeTakeFirstOrThrow();
    await lock(m.c);
    const [outcome] = await t.services.scheduler.runNow('seal_drive_folder_names');
    expect(outcome).toMatchObject({ task: 'seal_drive_folder_names', result: { sealed: 1 } });
    const row = await db.selectFrom('fol_folders').selectAll().where('fol_folder_id', '=', old.fol_folder_id).executeTakeFirstOrThrow();
    expect([row.fol_name, typeof row.fol_sealed_key]).toEqual([null, 'string']);
    expect(JSON.stringify(row)).not.toContain('Left in clear');
    const [again] = await t.services.scheduler.runNow('seal_drive_folder_names');
    expect(again).toMatchObject({ result: { sealed: 0 } });
    await unlockByCode(m.c, m.password, m.codes[0]!);
    const inside = await post(m.c, 'drive_list', { folder_id: outer, numperpage: 10 });
    expect(inside.json.data.folders).toEqual([expect.objectContaining({ folder_id: old.fol_folder_id, name: 'Left in clear', content_locked: false })]);
  });

  it('after a vault rotation the names and MIME types still open, and names left in clear from before are sealed', async () => {
    const m = await vaultMember();
    const { outer, inner, file } = await sealedTree(m);
    const db = t.services.db;
    // A sealed folder and a sealed file's MIME type as they were stored before names were sealed (0032).
    const old = await db
      .insertInto('fol_folders')
      .values({ fol_usr_user_id: m.userId, fol_fol_folder_id_parent: outer, fol_name: 'Left in clear', fol_is_sealed: true })
      .returning('fol_folder_id')
      .executeTakeFirstOrThrow();
    // A new version: the earlier content's MIME type is not kept readable either.
    expect((await webUpload(m.c, content(10, 'v2'), { file_id: file, mime_type: MIME })).statusCode).toBe(200);
    const versions = await post(m.c, 'drive_versions', { file_id: file });
    expect(versions.json.data.versions[0].mime_type).toBeNull();
    expect(versions.json.data.file).toMatchObject({ mime_type: MIME, version_count: 1 });
    await db.updateTable('fvr_file_versions').set({ fvr_mime_type: 'text/x-old-kind' }).where('fvr_fil_file_id', '=', file).execute();
    expect((await action(t, m.headers, 'drive_versions', { file_id: file })).body).not.toContain('old-kind');
    await db.updateTable('fil_files').set({ fil_sealed_mime: null, fil_mime_type: 'text/x-old-kind' }).where('fil_file_id', '=', file).execute();
    // A pending upload's MIME type waits sealed, and follows the rotation.
    const pendingBytes = content(300, 'pending-mime');
    const pending = await post(m.c, 'drive_upload_init', { name: 'pending.bin', size_bytes: pendingBytes.length, folder_id: inner, mime_type: 'application/x-pending-kind' });
    expect(pending.statusCode).toBe(200);
    const fup = await db.selectFrom('fup_file_uploads').selectAll().where('fup_usr_user_id', '=', m.userId).executeTakeFirstOrThrow();
    expect([fup.fup_mime_type, typeof fup.fup_sealed_mime]).toEqual([null, 'string']);
    expect(JSON.stringify(fup)).not.toContain('pending-kind');
    const lockedFirst = await action(t, m.headers, 'drive_list', { folder_id: outer, numperpage: 10 });
    expect(lockedFirst.json.data.folders.map((f: { name: string | null }) => f.name)).toEqual([null, null]);
    expect(lockedFirst.body).not.toContain('Left in clear');
    const lockedFile = await action(t, m.headers, 'drive_list', { folder_id: inner, numperpage: 10 });
    expect(lockedFile.json.data.files[0].mime_type).toBeNull();

    expect((await post(m.c, 'vault_rotate_options')).statusCode).toBe(200);
    const rotated = await post(m.c, 'vault_rotate_verify', { password: m.password });
    expect(rotated.statusCode).toBe(200);
    const leftover = await db.selectFrom('fol_folders').selectAll().where('fol_folder_id', '=', old.fol_folder_id).executeTakeFirstOrThrow();
    expect([leftover.fol_name, typeof leftover.fol_sealed_key]).toEqual([null, 'string']);
    expect(leftover.fol_sealed_name).not.toContain('clear');
    const versionRow = await db.selectFrom('fvr_file_versions').select('fvr_mime_type').where('fvr_fil_file_id', '=', file).executeTakeFirstOrThrow();
    expect(versionRow.fvr_mime_type).toBeNull();
    const fileRow = await db.selectFrom('fil_files').selectAll().where('fil_file_id', '=', file).executeTakeFirstOrThrow();
    expect([fileRow.fil_mime_type, typeof fileRow.fil_sealed_mime]).toEqual([null, 'string']);

    await lock(m.c);
    await unlockByCode(m.c, m.password, rotated.json.data.recovery_codes[0]);
    const root = await post(m.c, 'drive_list', { numperpage: 10 });
    expect(root.json.data.folders[0]).toMatchObject({ folder_id: outer, name: OUTER, content_locked: false });
    const inside = await post(m.c, 'drive_list', { folder_id: outer, numperpage: 10 });
    expect(inside.json.data.folders.map((f: { name: string }) => f.name).sort()).toEqual(['Left in clear', INNER]);
    const files = await post(m.c, 'drive_list', { folder_id: inner, numperpage: 10 });
    expect(files.json.data.files[0]).toMatchObject({ mime_type: 'text/x-old-kind', content_locked: false });
    expect((await m.c.get(`/drive/file/${file}`)).headers['content-type']).toBe('text/x-old-kind');
    const token = pending.json.data.upload_token as string;
    await m.c.api('PUT', `/api/v1/drive_upload/${token}`, { payload: pendingBytes, headers: { 'content-type': 'application/octet-stream', 'content-range': 'bytes 0-299/300' } });
    const completed = await post(m.c, 'drive_upload_complete', { upload_token: token });
    expect(completed.json.data.file).toMatchObject({ name: 'pending.bin', mime_type: 'application/x-pending-kind', content_locked: false });
  });
});

describe('rotation with sealed Drive files', () => {
  it('keeps sealed files readable, retires the old codes, and keeps only the rotating unlocker', async () => {
    const m = await vaultMember();
    const folderId = await sealedFolder(m.c);
    const bytes = content(2 * FRAME_BYTES + 7, 'rotate');
    const file = (await webUpload(m.c, bytes, { name: 'before rotation.bin', folder_id: folderId })).json.data.file;
    // A pending upload's sealed name follows the rotation too.
    const pendingBytes = content(300, 'pending');
    const pending = await post(m.c, 'drive_upload_init', { name: 'pending name.bin', size_bytes: pendingBytes.length, folder_id: folderId });
    expect(pending.statusCode).toBe(200);
    const before = await t.services.db.selectFrom('fil_files').select('fil_sealed_key').where('fil_file_id', '=', file.file_id).executeTakeFirstOrThrow();

    expect((await post(m.c, 'vault_passphrase_enroll', { passphrase: 'an old passphrase here', password: m.password })).statusCode).toBe(200);
    expect((await post(m.c, 'vault_rotate_options')).statusCode).toBe(200);
    const rotated = await post(m.c, 'vault_rotate_verify', { password: m.password });
    expect(rotated.statusCode).toBe(200);
    expect(rotated.json.data).toMatchObject({ key_generation: 2, recovery_codes_left: 10 });
    // The passphrase was not given to the rotation: only the new codes unlock the new generation.
    expect(rotated.json.data.unlockers.map((u: { type: string }) => u.type)).toEqual(['recovery']);
    const after = await t.services.db.selectFrom('fil_files').select('fil_sealed_key').where('fil_file_id', '=', file.file_id).executeTakeFirstOrThrow();
    expect(after.fil_sealed_key).not.toBe(before.fil_sealed_key);

    expect((await m.c.get(`/drive/file/${file.file_id}`)).rawPayload.equals(bytes)).toBe(true);
    await lock(m.c);
    expect((await post(m.c, 'vault_unlock_recovery', { password: m.password, code: m.codes[1] })).json.data.reason).toBe('unlock_failed');
    expect((await post(m.c, 'vault_unlock_passphrase', { password: m.password, passphrase: 'an old passphrase here' })).json.data.reason).toBe('no_passphrase');
    expect((await m.c.get(`/drive/file/${file.file_id}`)).statusCode).toBe(423);
    await unlockByCode(m.c, m.password, rotated.json.data.recovery_codes[0]);
    const got = await m.c.get(`/drive/file/${file.file_id}`);
    expect(got.statusCode).toBe(200);
    expect(got.rawPayload.equals(bytes)).toBe(true);
    const listed = await post(m.c, 'drive_list', { folder_id: folderId });
    expect(listed.json.data.files[0].name).toBe('before rotation.bin');

    const token = pending.json.data.upload_token as string;
    await m.c.api('PUT', `/api/v1/drive_upload/${token}`, { payload: pendingBytes, headers: { 'content-type': 'application/octet-stream', 'content-range': `bytes 0-299/300` } });
    const completed = await post(m.c, 'drive_upload_complete', { upload_token: token });
    expect(completed.statusCode).toBe(200);
    expect(completed.json.data.file.name).toBe('pending name.bin');
  });

  it('a file whose key was sealed to a key already thrown away does not stop the rotation; the others move to the new key', async () => {
    const m = await vaultMember();
    const folderId = await sealedFolder(m.c);
    const keptBytes = content(500, 'kept');
    const kept = (await webUpload(m.c, keptBytes, { name: 'kept.bin', folder_id: folderId })).json.data.file;
    const lost = (await webUpload(m.c, content(400, 'lost'), { name: 'lost.bin', folder_id: folderId })).json.data.file;
    // Data lost before rotations were serialised: a key that opens under no secret the vault has (the
    // other file's sealed key is bound to that file's id, so it opens for no other file).
    const keys = await t.services.db.selectFrom('fil_files').select(['fil_file_id', 'fil_sealed_key']).where('fil_file_id', 'in', [kept.file_id, lost.file_id]).execute();
    const keptKey = keys.find((k) => k.fil_file_id === kept.file_id)!.fil_sealed_key!;
    await t.services.db.updateTable('fil_files').set({ fil_sealed_key: keptKey }).where('fil_file_id', '=', lost.file_id).execute();

    expect((await post(m.c, 'vault_rotate_options')).statusCode).toBe(200);
    const rotated = await post(m.c, 'vault_rotate_verify', { password: m.password });
    expect(rotated.statusCode, rotated.body).toBe(200);
    const after = await t.services.db.selectFrom('fil_files').select(['fil_file_id', 'fil_sealed_key']).where('fil_file_id', 'in', [kept.file_id, lost.file_id]).execute();
    expect(after.find((k) => k.fil_file_id === kept.file_id)!.fil_sealed_key).not.toBe(keptKey);
    expect(after.find((k) => k.fil_file_id === lost.file_id)!.fil_sealed_key).toBe(keptKey);
    await lock(m.c);
    await unlockByCode(m.c, m.password, rotated.json.data.recovery_codes[0]);
    const got = await m.c.get(`/drive/file/${kept.file_id}`);
    expect(got.statusCode).toBe(200);
    expect(got.rawPayload.equals(keptBytes)).toBe(true);
  });
});

describe('a rotation interleaved with uploads into a sealed folder', () => {
  it('a sealed folder made and one renamed while a rotation runs wait for it and seal their names to the new key', async () => {
    const m = await vaultMember();
    const outer = await sealedFolder(m.c, 'Outer before');
    expect((await post(m.c, 'vault_rotate_options')).statusCode).toBe(200);
    const held = holdRotation(t.services, m.userId);
    let made: Awaited<ReturnType<typeof post>>;
    try {
      const rotation = post(m.c, 'vault_rotate_verify', { password: m.password });
      await held.reached;
      const create = post(m.c, 'drive_folder_create', { name: 'made during the rotation', parent_id: outer });
      const rename = post(m.c, 'drive_rename', { folder_id: outer, name: 'renamed during the rotation' });
      await settledOrWaiting(t.services.db, [create, rename], 2);
      held.release();
      const rotated = await rotation;
      expect(rotated.statusCode).toBe(200);
      made = await create;
      expect(made.statusCode).toBe(200);
      expect((await rename).statusCode).toBe(200);
      // Opened with the new generation only: lock, then unlock with a new code.
      await lock(m.c);
      await unlockByCode(m.c, m.password, rotated.json.data.recovery_codes[0]);
    } finally {
      held.remove();
    }
    const root = await post(m.c, 'drive_list', { numperpage: 10 });
    expect(root.json.data.folders[0]).toMatchObject({ folder_id: outer, name: 'renamed during the rotation', content_locked: false });
    const inside = await post(m.c, 'drive_list', { folder_id: outer, numperpage: 10 });
    expect(inside.json.data.folders[0]).toMatchObject({ folder_id: made.json.data.folder.folder_id, name: 'made during the rotation', content_locked: false });
  });

  it('an upload completing and one starting while a rotation runs wait for it and seal to the new key', async () => {
    const m = await vaultMember();
    const folderId = await sealedFolder(m.c);
    const bytes = content(FRAME_BYTES + 11, 'during');
    const opened = await post(m.c, 'drive_upload_init', { name: 'finished during the rotation.bin', size_bytes: bytes.length, folder_id: folderId });
    const token = opened.json.data.upload_token as string;
    for (let start = 0; start < bytes.length; start += CHUNK) {
      const part = bytes.subarray(start, start + CHUNK);
      const put = await m.c.api('PUT', `/api/v1/drive_upload/${token}`, {
        payload: part,
        headers: { 'content-type': 'application/octet-stream', 'content-range': `bytes ${start}-${start + part.length - 1}/${bytes.length}` },
      });
      expect(put.statusCode).toBe(200);
    }
    const later = content(500, 'later');
    expect((await post(m.c, 'vault_rotate_options')).statusCode).toBe(200);
    const held = holdRotation(t.services, m.userId);
    let started: Awaited<ReturnType<typeof post>>;
    try {
      const rotation = post(m.c, 'vault_rotate_verify', { password: m.password });
      await held.reached;
      // The rotation re-sealed the Drive's files and uploads and holds its transaction open: now the writers.
      const complete = post(m.c, 'drive_upload_complete', { upload_token: token });
      const start = post(m.c, 'drive_upload_init', { name: 'started during the rotation.bin', size_bytes: later.length, folder_id: folderId });
      await settledOrWaiting(t.services.db, [complete, start], 2);
      held.release();
      expect((await rotation).statusCode).toBe(200);
      const completed = await complete;
      expect(completed.statusCode).toBe(200);
      started = await start;
      expect(started.statusCode).toBe(200);
    } finally {
      held.remove();
    }
    const listed = await post(m.c, 'drive_list', { folder_id: folderId });
    expect(listed.json.data.files.map((f: { name: string | null }) => f.name)).toEqual(['finished during the rotation.bin']);
    const file = listed.json.data.files[0];
    expect((await m.c.get(`/drive/file/${file.file_id}`)).rawPayload.equals(bytes)).toBe(true);
    const laterToken = started.json.data.upload_token as string;
    await m.c.api('PUT', `/api/v1/drive_upload/${laterToken}`, {
      payload: later,
      headers: { 'content-type': 'application/octet-stream', 'content-range': `bytes 0-${later.length - 1}/${later.length}` },
    });
    const done = await post(m.c, 'drive_upload_complete', { upload_token: laterToken });
    expect([done.statusCode, done.json.data.file?.name]).toEqual([200, 'started during the rotation.bin']);
  });
});

describe('key material', () => {
  it('after a full sealed Drive flow, no name, plaintext byte, code or vault secret is in the logs, the database, Redis or the blob store', async () => {
    const m = await vaultMember();
    const folderId = await sealedFolder(m.c);
    const secretName = 'zebra-unicorn-ledger.xlsx';
    const bytes = Buffer.from('PLAINTEXT-MARKER '.repeat(5000), 'utf8');
    const file = (await webUpload(m.c, bytes, { name: secretName, folder_id: folderId, sha256: sha256(bytes) })).json.data.file;
    await post(m.c, 'drive_rename', { file_id: file.file_id, name: `renamed-${secretName}` }, { 'idempotency-key': 'key-material-rename' });
    expect((await m.c.get(`/drive/file/${file.file_id}`)).rawPayload.equals(bytes)).toBe(true);
    await lock(m.c);
    await unlockByCode(m.c, m.password, m.codes[2]!);
    await m.c.get(`/drive?folder=${folderId}`);
    const window = t.services.vaultWindows.forSession(m.c.jar.cookies.get('gatehouse_session')!, '127.0.0.1');
    const secretKey = (await window.unsealFor(t.services.db, m.userId))!.secretKey;

    const tables = [
      'fil_files',
      'fbb_file_blobs',
      'fvr_file_versions',
      'fup_file_uploads',
      'fch_file_changes',
      'uev_user_encryption_vaults',
      'uew_user_encryption_wrappings',
      'uvw_vault_windows',
      'aik_api_idempotency_keys',
      'wss_web_sessions',
      'rql_request_logs',
    ] as const;
    let dump = logLines.join('\n');
    expect(logLines.length).toBeGreaterThan(10);
    for (const table of tables) dump += JSON.stringify(await t.services.db.selectFrom(table).selectAll().execute());
    const store = t.services.vaultWindows.store;
    if (store instanceof RedisVaultWindowStore) {
      const redis = new Redis(process.env.REDIS_URL!);
      for (const key of await redis.keys(`${store.prefix}*`)) dump += key + (await redis.get(key));
      redis.disconnect();
    }
    const stored = await Promise.all((await blobFiles(path.join(t.dataDir, 'blobs'))).map((f) => readFile(f)));
    const secrets = [secretName, ...m.codes, secretKey.toString('base64url'), secretKey.toString('hex'), secretKey.toString('base64')];
    for (const secret of secrets) expect(dump, secret.slice(0, 8)).not.toContain(secret);
    for (const blob of stored) expect(blob.includes(Buffer.from('PLAINTEXT-MARKER'))).toBe(false);
  });
});
