import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { open, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import type { BlobStoreConfig } from '../config.js';
import type { BackupProgress } from './progress.js';

// Drive's blob bytes in a backup (issue 35). A backup is the database dump plus, beside it, a manifest
// (`<backup>.manifest.json`) that says where the Drive bytes are: with the local blob store (`fs`) a tar
// of DATA_DIR/blobs (`<backup>.blobs.tar`), streamed by tar(1), never buffered; with an S3 store, which the
// backup cannot copy, the bucket and what to copy, which restore repeats. Without a manifest (a backup
// from before) restore says that the bytes are not in it.

export const MANIFEST_SUFFIX = '.manifest.json';
export const BLOBS_SUFFIX = '.blobs.tar';

export interface BlobManifest {
  format: 1;
  /** The database dump this manifest belongs to (its file name). */
  database: string;
  blob_store:
    | { driver: 'fs'; archive: string; files: number; bytes: number }
    | { driver: 's3'; endpoint: string | null; bucket: string; region: string; copy: string };
}

export class BlobBackupError extends Error {}

/** The side files of a backup at `backupPath` (its manifest and its blob archive). */
export function sideFilesOf(backupPath: string): string[] {
  return [`${backupPath}${MANIFEST_SUFFIX}`, `${backupPath}${BLOBS_SUFFIX}`];
}

function runTar(args: string[], okCodes: number[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('tar', args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString('utf8')).slice(-4000);
    });
    child.on('error', (e: NodeJS.ErrnoException) => reject(new BlobBackupError(e.code === 'ENOENT' ? 'tar is not installed (PATH)' : `tar could not start: ${e.message}`)));
    child.on('close', (code) => (code !== null && okCodes.includes(code) ? resolve() : reject(new BlobBackupError(`tar failed (exit ${code}): ${stderr.trim()}`))));
  });
}

/** Files and bytes under the blob directory (blobs/tmp left out), for the manifest and the messages. */
async function census(dir: string): Promise<{ files: number; bytes: number }> {
  let files = 0;
  let bytes = 0;
  const walk = async (d: string): Promise<void> => {
    for (const entry of await readdir(d, { withFileTypes: true })) {
      const p = path.join(d, entry.name);
      if (entry.isDirectory()) {
        if (!(d === dir && entry.name === 'tmp')) await walk(p);
      }
      else if (entry.isFile()) {
        files++;
        bytes += (await stat(p)).size;
      }
    }
  };
  if (existsSync(dir)) await walk(dir);
  return { files, bytes };
}

function s3CopyNote(store: Extract<BlobStoreConfig, { driver: 's3' }>): string {
  const where = `s3://${store.bucket}${store.endpoint ? ` at ${store.endpoint}` : ''} (region ${store.region})`;
  return (
    `Drive's bytes are in the S3 bucket ${where}, not in this backup. Copy the bucket's objects ` +
    `(for example: aws s3 sync s3://${store.bucket} s3://NEW-BUCKET${store.endpoint ? ` --endpoint-url ${store.endpoint}` : ''}) ` +
    'or keep the bucket, and point S3_BUCKET and S3_ENDPOINT of the restored server at it; keys are the same.'
  );
}

/**
 * Writes the backup's side files next to `backupPath` (already published): the manifest, and with the
 * local store the tar of DATA_DIR/blobs. Each is written under a temporary name, synced and renamed.
 */
export async function backUpBlobs(backupPath: string, dataDir: string, store: BlobStoreConfig, progress: (p: BackupProgress) => void): Promise<BlobManifest> {
  const database = path.basename(backupPath);
  let manifest: BlobManifest;
  if (store.driver === 'fs') {
    const archive = `${backupPath}${BLOBS_SUFFIX}`;
    const partial = `${archive}.partial`;
    const blobsDir = path.join(dataDir, 'blobs');
    progress({ kind: 'note', text: `archiving Drive's blobs (${blobsDir}) into ${archive}` });
    try {
      // Blobs are written in blobs/tmp (left out) and renamed into place, so the archive never holds a half
      // blob under a blob's name. A blob swept while tar reads (exit 1: "file changed or removed") is one nothing
      // references any more.
      const args = existsSync(blobsDir) ? ['-cf', partial, '-C', dataDir, '--exclude=blobs/tmp', 'blobs'] : ['-cf', partial, '--files-from=/dev/null'];
      await runTar(args, [0, 1]);
      await syncFile(partial);
      await rename(partial, archive);
    } catch (e) {
      await rm(partial, { force: true });
      throw e;
    }
    manifest = { format: 1, database, blob_store: { driver: 'fs', archive: path.basename(archive), ...(await census(blobsDir)) } };
  } else {
    manifest = { format: 1, database, blob_store: { driver: 's3', endpoint: store.endpoint ?? null, bucket: store.bucket, region: store.region, copy: s3CopyNote(store) } };
    progress({ kind: 'note', text: manifest.blob_store.driver === 's3' ? manifest.blob_store.copy : '' });
  }
  const target = `${backupPath}${MANIFEST_SUFFIX}`;
  const partial = `${target}.partial`;
  const file = await open(partial, 'wx', 0o600);
  try {
    await file.writeFile(`${JSON.stringify(manifest, null, 2)}\n`);
    await file.sync();
  } finally {
    await file.close();
  }
  await rename(partial, target);
  return manifest;
}

async function syncFile(file: string): Promise<void> {
  const handle = await open(file, 'r+');
  try {
    await handle.chmod(0o600);
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** The manifest beside a backup, or null (a backup from before blobs were backed up). */
export async function readManifest(backupPath: string): Promise<BlobManifest | null> {
  const file = `${backupPath}${MANIFEST_SUFFIX}`;
  if (!existsSync(file)) return null;
  const parsed = JSON.parse(await readFile(file, 'utf8')) as BlobManifest;
  if (parsed.format !== 1 || !parsed.blob_store) throw new BlobBackupError(`${file} is not a Gatehouse backup manifest`);
  return parsed;
}

/**
 * Restores the blobs of the backup at `backupPath` into DATA_DIR/blobs (existing blobs are content
 * addressed, so one of the same name is the same bytes), or says what to do: copy the S3 bucket, or, with
 * no manifest, that the backup does not hold Drive's bytes. Returns the message it gave.
 */
export async function restoreBlobs(backupPath: string, dataDir: string, progress: (p: BackupProgress) => void): Promise<string> {
  const manifest = await readManifest(backupPath);
  let text: string;
  if (!manifest) {
    text = `${backupPath} has no ${MANIFEST_SUFFIX}: it holds no Drive file bytes. Copy DATA_DIR/blobs (or the S3 bucket) of the server it came from, or those files will not download.`;
  } else if (manifest.blob_store.driver === 's3') {
    text = manifest.blob_store.copy;
  } else {
    const archive = path.join(path.dirname(backupPath), manifest.blob_store.archive);
    if (!existsSync(archive)) throw new BlobBackupError(`${archive} is missing: the manifest says Drive's blobs are in it`);
    progress({ kind: 'step', fraction: 0.95, label: 'restoring Drive blobs' });
    await runTar(['-xf', archive, '-C', dataDir], [0]);
    text = `restored ${manifest.blob_store.files} Drive blobs (${manifest.blob_store.bytes} bytes) into ${path.join(dataDir, 'blobs')}`;
  }
  progress({ kind: 'note', text });
  return text;
}
