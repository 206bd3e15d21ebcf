import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sql, type Kysely } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readManifest, restoreBlobs } from '../../src/backups/blobs.js';
import { backupSourceOf, createBackup } from '../../src/backups/create.js';
import type { BackupProgress } from '../../src/backups/progress.js';
import { restoreIntoDataDir, restoreIntoPostgres } from '../../src/backups/restore.js';
import { openDatabase } from '../../src/db/database.js';
import type { DB } from '../../src/db/types.js';
import { openBlobStore } from '../../src/drive/blobs/index.js';
import { randomHex } from '../../src/lib/crypto.js';
import { onPostgres } from '../helpers/database.js';
import { content, createDriveApp, member, PLAN, upload, type DriveApp } from './drive-upload-fixture.js';

// Issue 35 item 10: a backup holds Drive's blob bytes (local store) or says where they are (S3), and a
// restore into a fresh data directory brings the bytes back.

async function readAll(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** The file's bytes as the server serves them: its blob row's storage key, read from the data dir's blob store. */
async function fileBytes(db: Kysely<DB>, dataDir: string, fileId: number): Promise<Buffer> {
  const row = await db
    .selectFrom('fil_files')
    .innerJoin('fbb_file_blobs', 'fbb_file_blob_id', 'fil_fbb_file_blob_id')
    .select('fbb_storage_key')
    .where('fil_file_id', '=', fileId)
    .executeTakeFirstOrThrow();
  return readAll(await openBlobStore({ driver: 'fs' }, dataDir).get(row.fbb_storage_key));
}

describe('backups hold Drive blobs', { timeout: 120_000 }, () => {
  let t: DriveApp;
  let fresh: string;
  const notes: string[] = [];
  const progress = (p: BackupProgress) => {
    if (p.kind === 'note') notes.push(p.text);
  };
  beforeAll(async () => {
    t = await createDriveApp();
    fresh = await mkdtemp(path.join(os.tmpdir(), 'gh-restore-blobs-'));
  });
  afterAll(async () => {
    await t?.close();
    await rm(fresh, { recursive: true, force: true });
  });

  /** The source of a backup of this test's own database (on PostgreSQL its clone, not DATABASE_URL). */
  async function source() {
    const base = backupSourceOf(t.services);
    if (!onPostgres) return base;
    const { rows } = await sql<{ name: string }>`select current_database() as name`.execute(t.services.db);
    const u = new URL(process.env.DATABASE_URL!);
    u.pathname = `/${rows[0]!.name}`;
    return { ...base, databaseUrl: u.toString() };
  }

  it('create a file, back up, restore into a fresh data dir: the file downloads identically', async () => {
    const m = await member(t, PLAN);
    const bytes = content(200_000, 'backed-up');
    const done = await upload(t, m.headers, bytes, { name: 'keep.bin' });
    expect(done.statusCode).toBe(200);
    const fileId = done.json.data.file.file_id as number;

    const backup = await createBackup(await source(), t.dataDir, progress);
    const manifest = await readManifest(backup.path);
    expect(manifest).toEqual({
      format: 1,
      database: path.basename(backup.path),
      blob_store: { driver: 'fs', archive: `${path.basename(backup.path)}.blobs.tar`, files: 1, bytes: 200_000 },
    });
    expect(existsSync(`${backup.path}.blobs.tar`)).toBe(true);

    if (!onPostgres) {
      const result = await restoreIntoDataDir(backup.path, fresh, progress);
      expect(result.blobs).toBe(`restored 1 Drive blobs (200000 bytes) into ${path.join(fresh, 'blobs')}`);
      const restored = await openDatabase({ dataDir: path.join(fresh, 'db') });
      try {
        expect((await fileBytes(restored.db, fresh, fileId)).equals(bytes)).toBe(true);
      } finally {
        await restored.close();
      }
    } else {
      const name = `gh_restore_${randomHex(6)}`;
      const admin = new pg.Client({ connectionString: process.env.DATABASE_URL });
      await admin.connect();
      try {
        await admin.query(`create database ${name} template template0`);
        const u = new URL(process.env.DATABASE_URL!);
        u.pathname = `/${name}`;
        const result = await restoreIntoPostgres(backup.path, u.toString(), progress, fresh);
        expect(result.blobs).toBe(`restored 1 Drive blobs (200000 bytes) into ${path.join(fresh, 'blobs')}`);
        const restored = await openDatabase({ databaseUrl: u.toString(), pgPoolMax: 1 });
        try {
          expect((await fileBytes(restored.db, fresh, fileId)).equals(bytes)).toBe(true);
        } finally {
          await restored.close();
        }
      } finally {
        await admin.query(`drop database if exists ${name} with (force)`);
        await admin.end();
      }
    }
    // Without the restore, the fresh data dir would have the row but not the bytes.
    expect(readFileSync(path.join(fresh, 'blobs', ...(await blobKeyPath(fileId)))).equals(bytes)).toBe(true);
  });

  async function blobKeyPath(fileId: number): Promise<string[]> {
    const row = await t.services.db
      .selectFrom('fil_files')
      .innerJoin('fbb_file_blobs', 'fbb_file_blob_id', 'fil_fbb_file_blob_id')
      .select('fbb_sha256')
      .where('fil_file_id', '=', fileId)
      .executeTakeFirstOrThrow();
    const sha = row.fbb_sha256.trim();
    return [sha.slice(0, 2), sha.slice(2, 4), sha];
  }

  it('with an S3 store the manifest says what to copy and restore says it; a backup without a manifest says the bytes are not in it', async () => {
    const s3 = { driver: 's3' as const, endpoint: 'http://127.0.0.1:9000', bucket: 'gh-blobs', region: 'us-east-1', accessKeyId: 'k', secretAccessKey: 's', forcePathStyle: true };
    const backup = await createBackup({ ...(await source()), blobStore: s3 }, t.dataDir, progress, { folder: 's3' });
    expect(existsSync(`${backup.path}.blobs.tar`)).toBe(false);
    const manifest = await readManifest(backup.path);
    expect(manifest?.blob_store).toMatchObject({ driver: 's3', endpoint: 'http://127.0.0.1:9000', bucket: 'gh-blobs', region: 'us-east-1' });
    const copy = (manifest!.blob_store as { copy: string }).copy;
    expect(copy).toContain('aws s3 sync s3://gh-blobs s3://NEW-BUCKET --endpoint-url http://127.0.0.1:9000');
    expect(JSON.stringify(manifest)).not.toContain('"s"');
    notes.length = 0;
    expect(await restoreBlobs(backup.path, fresh, progress)).toBe(copy);
    expect(notes).toEqual([copy]);

    await rm(`${backup.path}.manifest.json`);
    expect(await restoreBlobs(backup.path, fresh, progress)).toMatch(/has no \.manifest\.json: it holds no Drive file bytes/);
  });
});
