import { ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { mkdtemp, readdir, readFile, rm, stat, unlink, utimes, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import S3rver from 's3rver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { purgeDriveUploadsTask } from '../../src/drive/uploads/purge-task.js';
import { signIn, type WebClient } from '../helpers/browser-session.js';
import { createDriveApp, memberWithLogin, PLAN, sha256, type DriveApp } from './drive-upload-fixture.js';

// Issue 35 item 8: the chunks of an upload into a sealed folder are sealed as they arrive, so neither the
// part file nor the shared S3 staging ever holds a plaintext byte (before, they sat there in the clear
// until completion, and for 24 h after a refused one); completion still yields a file that opens
// identically; and the purge task removes every file an abandoned upload left (its part file, a crashed
// completion's .part.sealed, its staged chunks, and strays no row names).

const CHUNK = 64 * 1024;
const MARKER = Buffer.from('PLAINTEXT-MARKER ', 'utf8');
/** Plaintext that is easy to spot: the marker over and over, and not a whole number of chunks. */
const secretBytes = (chunks: number) => Buffer.concat(Array.from({ length: Math.ceil((chunks * CHUNK + 777) / MARKER.length) }, () => MARKER)).subarray(0, chunks * CHUNK + 777);

const post = (c: WebClient, name: string, payload: Record<string, unknown> = {}) => c.api('POST', `/api/v1/action/${name}`, { payload });

async function vaultMember(t: DriveApp) {
  const m = await memberWithLogin(t, PLAN);
  const c = await signIn(t, m.email, m.password);
  expect((await post(c, 'vault_setup_options', { password: m.password })).statusCode).toBe(200);
  expect((await post(c, 'vault_setup_verify', { acknowledge_loss: true })).statusCode).toBe(200);
  const folder = await post(c, 'drive_folder_create', { name: 'Private', sealed: true });
  expect(folder.statusCode).toBe(200);
  return { ...m, c, folderId: folder.json.data.folder.folder_id as number };
}

async function putChunk(c: WebClient, token: string, bytes: Buffer, start: number, end: number) {
  return c.api('PUT', `/api/v1/drive_upload/${token}`, {
    payload: bytes.subarray(start, end),
    headers: { 'content-type': 'application/octet-stream', 'content-range': `bytes ${start}-${end - 1}/${bytes.length}` },
  });
}

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true }).catch(() => []);
  return entries.filter((e) => e.isFile()).map((e) => path.join(e.parentPath, e.name));
}

async function holdsMarker(files: string[]): Promise<boolean> {
  for (const f of files) if ((await readFile(f)).includes(MARKER)) return true;
  return false;
}

const partFilesOf = async (t: DriveApp) => (await readdir(path.join(t.dataDir, 'uploads')).catch(() => [] as string[])).filter((n) => /\.part(\.sealed)?$/.test(n));

describe('uploads into a sealed folder (local part files)', () => {
  let t: DriveApp;
  beforeAll(async () => {
    t = await createDriveApp({ config: { baseUrl: 'https://members.example.com' } });
  });
  afterAll(async () => t?.close());

  it('hold no plaintext at rest after a chunk, and complete into a file that opens identically', async () => {
    const m = await vaultMember(t);
    const bytes = secretBytes(2);
    const opened = await post(m.c, 'drive_upload_init', { name: 'ledger.txt', size_bytes: bytes.length, sha256: sha256(bytes), folder_id: m.folderId });
    expect(opened.statusCode).toBe(200);
    const token = opened.json.data.upload_token as string;
    expect((await putChunk(m.c, token, bytes, 0, CHUNK)).json.data.received_bytes).toBe(CHUNK);

    const parts = await partFilesOf(t);
    expect(parts).toHaveLength(1);
    const part = path.join(t.dataDir, 'uploads', parts[0]!);
    // The chunk's bytes are there (sealed: more than the plaintext), and none of them in the clear.
    expect((await stat(part)).size).toBeGreaterThan(CHUNK);
    expect((await readFile(part)).includes(MARKER)).toBe(false);

    expect((await putChunk(m.c, token, bytes, CHUNK, 2 * CHUNK)).statusCode).toBe(200);
    // A chunk resent after a lost answer is refused as before; a chunk sent again from the server's
    // offset goes on from the sealed file's end.
    expect((await putChunk(m.c, token, bytes, CHUNK, 2 * CHUNK)).json.data).toMatchObject({ reason: 'wrong_offset', received_bytes: 2 * CHUNK });
    expect((await putChunk(m.c, token, bytes, 2 * CHUNK, bytes.length)).json.data).toMatchObject({ received_bytes: bytes.length, complete: true });
    expect(await holdsMarker(await filesUnder(t.dataDir))).toBe(false);

    const done = await post(m.c, 'drive_upload_complete', { upload_token: token });
    expect(done.statusCode).toBe(200);
    const fileId = done.json.data.file.file_id as number;
    expect(done.json.data.file).toMatchObject({ name: 'ledger.txt', size_bytes: bytes.length, folder_id: m.folderId });
    const got = await m.c.get(`/drive/file/${fileId}`);
    expect(got.statusCode).toBe(200);
    expect(got.rawPayload.equals(bytes)).toBe(true);
    // Nothing of the upload is left, and the stored blob is sealed too.
    expect(await partFilesOf(t)).toEqual([]);
    expect(await holdsMarker(await filesUnder(t.dataDir))).toBe(false);
  });

  it("refuse a completion whose bytes are not the declared ones, from the server's own hash of the decrypted chunks", async () => {
    const m = await vaultMember(t);
    const bytes = secretBytes(1);
    const token = (await post(m.c, 'drive_upload_init', { name: 'x.txt', size_bytes: bytes.length, sha256: sha256(Buffer.from('other')), folder_id: m.folderId })).json.data.upload_token;
    expect((await putChunk(m.c, token, bytes, 0, CHUNK)).statusCode).toBe(200);
    expect((await putChunk(m.c, token, bytes, CHUNK, bytes.length)).statusCode).toBe(200);
    const refused = await post(m.c, 'drive_upload_complete', { upload_token: token });
    expect(refused.statusCode).toBe(422);
    expect(refused.json.data).toEqual({ reason: 'hash_mismatch', expected_sha256: sha256(Buffer.from('other')), received_sha256: sha256(bytes) });
    // Refused and kept: still nothing in the clear.
    expect(await holdsMarker(await filesUnder(t.dataDir))).toBe(false);
  });

  it('keep their received chunks readable across a vault rotation (the upload key follows the vault)', async () => {
    const m = await vaultMember(t);
    const bytes = secretBytes(1);
    const token = (await post(m.c, 'drive_upload_init', { name: 'rotated.txt', size_bytes: bytes.length, sha256: sha256(bytes), folder_id: m.folderId })).json.data.upload_token;
    expect((await putChunk(m.c, token, bytes, 0, CHUNK)).statusCode).toBe(200);
    const keyBefore = (await t.services.db.selectFrom('fup_file_uploads').select('fup_sealed_key').where('fup_usr_user_id', '=', m.userId).executeTakeFirstOrThrow()).fup_sealed_key;
    expect((await post(m.c, 'vault_rotate_options')).statusCode).toBe(200);
    expect((await post(m.c, 'vault_rotate_verify', { password: m.password })).statusCode).toBe(200);
    const keyAfter = (await t.services.db.selectFrom('fup_file_uploads').select('fup_sealed_key').where('fup_usr_user_id', '=', m.userId).executeTakeFirstOrThrow()).fup_sealed_key;
    expect(keyAfter).not.toBeNull();
    expect(keyAfter).not.toBe(keyBefore);
    expect((await putChunk(m.c, token, bytes, CHUNK, bytes.length)).statusCode).toBe(200);
    const done = await post(m.c, 'drive_upload_complete', { upload_token: token });
    expect(done.statusCode).toBe(200);
    expect((await m.c.get(`/drive/file/${done.json.data.file.file_id}`)).rawPayload.equals(bytes)).toBe(true);
  });

  it('are purged with every file they left once idle: the part file and a crashed completion\'s .part.sealed; strays too', async () => {
    const m = await vaultMember(t);
    const bytes = secretBytes(1);
    const token = (await post(m.c, 'drive_upload_init', { name: 'gone.txt', size_bytes: bytes.length, folder_id: m.folderId })).json.data.upload_token;
    const before = await partFilesOf(t);
    expect((await putChunk(m.c, token, bytes, 0, CHUNK)).statusCode).toBe(200);
    const partName = (await partFilesOf(t)).find((n) => !before.includes(n))!;
    const part = path.join(t.dataDir, 'uploads', partName!);
    // A completion that died while encrypting left its sealed copy behind.
    await writeFile(`${part}.sealed`, 'half-written sealed copy');
    // And a completed upload's leftovers whose cleanup never ran (no row names them), a day old.
    const stray = path.join(t.dataDir, 'uploads', `${'b'.repeat(32)}.part`);
    const straySealed = `${stray}.sealed`;
    await writeFile(stray, 'x');
    await writeFile(straySealed, 'y');
    const dayAgo = new Date(t.clock.nowMs() - 25 * 3600 * 1000);
    await utimes(stray, dayAgo, dayAgo);
    await utimes(straySealed, dayAgo, dayAgo);
    const purge = () => purgeDriveUploadsTask(t.services.driveStorage).run({ db: t.services.db, clock: t.clock });

    // Not idle yet: the live upload's files stay; the strays go.
    expect(await purge()).toMatchObject({ deleted_uploads: 0, deleted_stray_parts: 2 });
    const kept = await partFilesOf(t);
    expect(kept).toEqual(expect.arrayContaining([partName, `${partName}.sealed`]));
    expect(kept).not.toContain(path.basename(stray));
    expect(kept).not.toContain(path.basename(straySealed));

    t.clock.advanceSeconds(24 * 3600 + 1);
    expect((await purge()).deleted_uploads).toBeGreaterThanOrEqual(1);
    expect(await partFilesOf(t)).toEqual([]);
  });
});

describe('uploads into a sealed folder (shared S3 staging)', () => {
  let t: DriveApp;
  let dir: string;
  let s3: S3rver;
  let client: S3Client;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'gh-sealed-staging-'));
    s3 = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory: path.join(dir, 's3rver'), configureBuckets: [{ name: 'gatehouse', configs: [] }] });
    const { port } = await s3.run();
    const endpoint = `http://127.0.0.1:${port}`;
    client = new S3Client({ endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } });
    t = await createDriveApp({
      config: { baseUrl: 'https://members.example.com', blobStore: { driver: 's3', endpoint, bucket: 'gatehouse', region: 'us-east-1', accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER', forcePathStyle: true } },
    });
  });
  afterAll(async () => {
    await t?.close();
    client?.destroy();
    await s3?.close();
    await rm(dir, { recursive: true, force: true });
  });

  const staged = async (prefix = 'uploads/') => ((await client.send(new ListObjectsV2Command({ Bucket: 'gatehouse', Prefix: prefix }))).Contents ?? []).map((o) => o.Key!);

  it('stage sealed chunks only; a node without the part file completes from them into the same file', async () => {
    const m = await vaultMember(t);
    const bytes = secretBytes(2);
    const token = (await post(m.c, 'drive_upload_init', { name: 's3.txt', size_bytes: bytes.length, sha256: sha256(bytes), folder_id: m.folderId })).json.data.upload_token;
    expect((await putChunk(m.c, token, bytes, 0, CHUNK)).statusCode).toBe(200);
    const [partName] = await partFilesOf(t);
    expect(await staged()).toEqual([`uploads/${partName}/${'0'.padStart(16, '0')}`]);
    // Neither the staged object (s3rver keeps objects as files) nor the part file holds the plaintext.
    expect(await holdsMarker(await filesUnder(dir))).toBe(false);
    expect(await holdsMarker(await filesUnder(t.dataDir))).toBe(false);

    expect((await putChunk(m.c, token, bytes, CHUNK, 2 * CHUNK)).statusCode).toBe(200);
    // The next chunk and the completion reach a node that never saw the part file.
    await unlink(path.join(t.dataDir, 'uploads', partName!));
    expect((await putChunk(m.c, token, bytes, 2 * CHUNK, bytes.length)).json.data).toMatchObject({ received_bytes: bytes.length });
    await unlink(path.join(t.dataDir, 'uploads', partName!));
    expect(await holdsMarker(await filesUnder(dir))).toBe(false);
    const done = await post(m.c, 'drive_upload_complete', { upload_token: token });
    expect(done.statusCode).toBe(200);
    const got = await m.c.get(`/drive/file/${done.json.data.file.file_id}`);
    expect(got.rawPayload.equals(bytes)).toBe(true);
    expect(await staged(`uploads/${partName}/`)).toEqual([]);
  });

  it('purge staged chunks of an idle upload and staged strays no row names', async () => {
    const m = await vaultMember(t);
    const bytes = secretBytes(1);
    const token = (await post(m.c, 'drive_upload_init', { name: 'idle.txt', size_bytes: bytes.length, folder_id: m.folderId })).json.data.upload_token;
    expect((await putChunk(m.c, token, bytes, 0, CHUNK)).statusCode).toBe(200);
    const [partName] = await partFilesOf(t);
    await client.send(new PutObjectCommand({ Bucket: 'gatehouse', Key: `uploads/${'c'.repeat(32)}.part/${'0'.padStart(16, '0')}`, Body: 'stray' }));
    // The staged objects' times are the real clock's; the purge's clock goes a day past them.
    t.clock.set(new Date(Date.now() + 24 * 3600 * 1000 + 60_000));
    const result = await purgeDriveUploadsTask(t.services.driveStorage).run({ db: t.services.db, clock: t.clock });
    expect(result).toMatchObject({ deleted_uploads: 1, deleted_stray_staged: 1 });
    expect(await staged()).toEqual([]);
    expect(await partFilesOf(t)).toEqual([]);
    expect(partName).toMatch(/\.part$/);
  });
});
