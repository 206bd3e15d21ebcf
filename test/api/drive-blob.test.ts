import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import S3rver from 's3rver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FsBlobStore } from '../../src/drive/blobs/fs.js';
import { S3BlobStore } from '../../src/drive/blobs/s3.js';
import type { BlobStore } from '../../src/drive/blobs/store.js';
import { signIn } from '../helpers/browser-session.js';
import { action, content, createDriveApp, memberWithLogin, PLAN, sendAll, sha256, type DriveApp } from './drive-upload-fixture.js';

async function read(stream: Readable): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const chunk of stream) parts.push(chunk as Buffer);
  return Buffer.concat(parts);
}

/** What every driver must do: content-addressed puts that refuse wrong bytes, ranges, stat, delete. */
function driverContract(label: string, store: () => BlobStore, scratch: () => string) {
  describe(`${label} driver`, () => {
    it('stores a stream under its sha256, serves it whole and by range, stats and deletes it', async () => {
      const bytes = content(300_000, `${label}-1`);
      const { key } = await store().put(sha256(bytes), Readable.from([bytes]), bytes.length);
      expect(key.endsWith(`${sha256(bytes).slice(0, 2)}/${sha256(bytes).slice(2, 4)}/${sha256(bytes)}`)).toBe(true);
      expect((await read(await store().get(key))).equals(bytes)).toBe(true);
      expect((await read(await store().get(key, { start: 1000, end: 1999 }))).equals(bytes.subarray(1000, 2000))).toBe(true);
      expect(await store().stat(key)).toEqual({ size: bytes.length });
      await store().delete(key);
      expect(await store().stat(key)).toBeNull();
      await store().delete(key); // deleting a missing blob is not an error
    });

    it('refuses bytes that are not the declared content, leaving nothing under its name', async () => {
      const bytes = content(1000, `${label}-2`);
      const claimed = sha256(content(1000, 'something else'));
      await expect(store().put(claimed, Readable.from([bytes]), bytes.length)).rejects.toThrow();
      await expect(store().put(sha256(bytes), Readable.from([bytes]), bytes.length + 1)).rejects.toThrow();
      const key = (name: string) => `${label === 'fs' ? '' : 'blobs/'}${name.slice(0, 2)}/${name.slice(2, 4)}/${name}`;
      expect(await store().stat(key(claimed))).toBeNull();
      expect(await store().stat(key(sha256(bytes)))).toBeNull();
    });

    it('stores a local file (putFile) and keeps the file for its owner to remove', async () => {
      const bytes = content(50_000, `${label}-3`);
      const file = path.join(scratch(), `${label}-putfile.part`);
      await writeFile(file, bytes);
      const { key } = await store().putFile(sha256(bytes), file, bytes.length);
      expect((await read(await store().get(key))).equals(bytes)).toBe(true);
      // The same content again is the same blob.
      expect((await store().putFile(sha256(bytes), file, bytes.length)).key).toBe(key);
      expect(await readdir(scratch())).toContain(`${label}-putfile.part`);
    });
  });
}

describe('blob stores', () => {
  let dir: string;
  let s3: S3rver;
  let endpoint: string;
  let s3store: S3BlobStore;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'gh-blobs-'));
    s3 = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory: path.join(dir, 's3rver'), configureBuckets: [{ name: 'gatehouse', configs: [] }] });
    const { port } = await s3.run();
    endpoint = `http://127.0.0.1:${port}`;
    s3store = new S3BlobStore({ endpoint, bucket: 'gatehouse', region: 'us-east-1', accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER', forcePathStyle: true });
  });
  afterAll(async () => {
    s3store?.close();
    await s3?.close();
    await rm(dir, { recursive: true, force: true });
  });

  driverContract('fs', () => new FsBlobStore(path.join(dir, 'fs')), () => dir);
  driverContract('s3', () => s3store, () => dir);

  it('s3: a blob larger than one part goes up as a multipart upload and reads back by range', async () => {
    const bytes = content(20 * 1024 * 1024 + 123, 'multipart');
    const created: Array<{ key: string; name: string }> = [];
    s3.on('event', (e: { Records: Array<{ eventName: string; s3: { object: { key: string } } }> }) => {
      for (const r of e.Records) created.push({ key: r.s3.object.key, name: r.eventName });
    });
    const { key } = await s3store.put(sha256(bytes), Readable.from([bytes.subarray(0, 9_000_000), bytes.subarray(9_000_000)]), bytes.length);
    expect(await s3store.stat(key)).toEqual({ size: bytes.length });
    // The server saw a completed multipart upload (ObjectCreated:Post), not a single PUT, for this key.
    expect(created.filter((e) => e.key === key)).toEqual([{ key, name: 'ObjectCreated:Post' }]);
    const start = 8 * 1024 * 1024 - 10;
    expect((await read(await s3store.get(key, { start, end: start + 99 }))).equals(bytes.subarray(start, start + 100))).toBe(true);
    expect((await read(await s3store.get(key))).equals(bytes)).toBe(true);
  });

  describe('the app on the s3 store', () => {
    let t: DriveApp;
    beforeAll(async () => {
      t = await createDriveApp({
        config: { blobStore: { driver: 's3', endpoint, bucket: 'gatehouse', region: 'us-east-1', accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER', forcePathStyle: true } },
      });
    });
    afterAll(async () => {
      await t?.close();
    });

    it('uploads in chunks into the bucket and serves the file back with Range', async () => {
      const m = await memberWithLogin(t, PLAN);
      const bytes = content(200_000, 's3-app');
      const init = await action(t, m.headers, 'drive_upload_init', { name: 'bucket.bin', size_bytes: bytes.length, sha256: sha256(bytes) });
      await sendAll(t, m.headers, init.json.data.upload_token, bytes);
      const done = await action(t, m.headers, 'drive_upload_complete', { upload_token: init.json.data.upload_token });
      expect(done.statusCode).toBe(200);
      const blob = await t.services.db.selectFrom('fbb_file_blobs').select(['fbb_driver', 'fbb_storage_key', 'fbb_refcount']).where('fbb_sha256', '=', sha256(bytes)).executeTakeFirstOrThrow();
      expect(blob).toEqual({ fbb_driver: 's3', fbb_storage_key: `blobs/${sha256(bytes).slice(0, 2)}/${sha256(bytes).slice(2, 4)}/${sha256(bytes)}`, fbb_refcount: 1 });
      expect(await s3store.stat(blob.fbb_storage_key)).toEqual({ size: bytes.length });
      const web = await signIn(t, m.email, m.password);
      const part = await web.get(`/drive/file/${done.json.data.file.file_id}`, { range: 'bytes=100000-100009' });
      expect(part.statusCode).toBe(206);
      expect(part.rawPayload.equals(bytes.subarray(100_000, 100_010))).toBe(true);
      // No part file stays behind.
      expect((await readdir(path.join(t.dataDir, 'uploads'))).filter((n) => n.endsWith('.part'))).toEqual([]);
    });
  });
});
