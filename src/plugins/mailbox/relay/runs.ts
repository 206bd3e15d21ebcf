import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import type { Kysely } from 'kysely';
import type { DB } from '../../../db/types.js';
import type { BlobStore } from '../../../drive/blobs/store.js';
import { acquireBlob, ingestBlob } from '../../../drive/files.js';
import type { Clock } from '../../../lib/clock.js';
import { randomHex, safeEqual, sha256Hex } from '../../../lib/crypto.js';
import { withFleetRelayTables } from '../fleet-relay-tables.js';

export const RELAY_BUNDLE_TYPE = 'application/gzip';

/** Why a bundle file is refused (bad input for the CLI). */
export class RelayBundleError extends Error {}

export interface BundleFile {
  sha256: string;
  sizeBytes: number;
}

/** The bundle file's SHA-256 and size; it must be a non-empty gzip file (magic bytes 1f 8b). */
export async function inspectBundle(file: string): Promise<BundleFile> {
  let handle;
  try {
    handle = await open(file, 'r');
  } catch (e) {
    throw new RelayBundleError(`cannot read bundle ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  try {
    const info = await handle.stat();
    if (!info.isFile()) throw new RelayBundleError(`bundle ${file} is not a file`);
    const head = Buffer.alloc(2);
    const { bytesRead } = await handle.read(head, 0, 2, 0);
    if (bytesRead < 2 || head[0] !== 0x1f || head[1] !== 0x8b) throw new RelayBundleError(`bundle ${file} is not a gzip file`);
    const hash = createHash('sha256');
    let sizeBytes = 0;
    for await (const chunk of handle.createReadStream({ start: 0, autoClose: false }) as AsyncIterable<Buffer>) {
      hash.update(chunk);
      sizeBytes += chunk.length;
    }
    return { sha256: hash.digest('hex'), sizeBytes };
  } finally {
    await handle.close();
  }
}

export interface CreatedRun {
  runId: number;
  /** Shown once, to the operator; only its SHA-256 is stored. */
  runToken: string;
  bundleSha256: string;
  bundleSizeBytes: number;
  expiresTime: Date;
}

/**
 * Creates a relay run: the bundle's bytes go into the blob store (written to a temporary file, fsynced and
 * renamed into place by the fs driver; the s3 driver serves every node) under a reference held by the run,
 * so Drive's sweeps never remove them. The run token is random, returned once, stored as its SHA-256.
 */
export async function createRelayRun(
  db: Kysely<DB>,
  blobs: BlobStore,
  clock: Clock,
  opts: { file: string; tokenHours: number },
): Promise<CreatedRun> {
  const bundle = await inspectBundle(opts.file);
  const runToken = randomHex(32);
  const now = clock.now();
  const expiresTime = new Date(now.getTime() + opts.tokenHours * 3600_000);
  const runId = await db.transaction().execute(async (trx) => {
    const blobId = await ingestBlob(trx, blobs, { sha256: bundle.sha256, sizeBytes: bundle.sizeBytes, mimeType: RELAY_BUNDLE_TYPE, time: now }, () =>
      blobs.put(bundle.sha256, createReadStream(opts.file), bundle.sizeBytes),
    );
    if (!(await acquireBlob(trx, blobId))) throw new Error('the bundle blob disappeared while it was stored; run the command again');
    const row = await withFleetRelayTables(trx)
      .insertInto('rlr_relay_runs')
      .values({
        rlr_token_hash: sha256Hex(runToken),
        rlr_bundle_sha256: bundle.sha256,
        rlr_bundle_size_bytes: bundle.sizeBytes,
        rlr_fbb_file_blob_id: blobId,
        rlr_expires_time: expiresTime,
        rlr_create_time: now,
        rlr_update_time: now,
      })
      .returning('rlr_relay_run_id')
      .executeTakeFirstOrThrow();
    return row.rlr_relay_run_id;
  });
  return { runId, runToken, bundleSha256: bundle.sha256, bundleSizeBytes: bundle.sizeBytes, expiresTime };
}

export interface LiveRun {
  runId: number;
  bundleSha256: string;
  bundleSizeBytes: number;
  blobId: number;
}

/** Compared against when the run does not exist, so an unknown run costs the same as a wrong token. */
const NO_RUN_HASH = sha256Hex('no such relay run');

/**
 * The run named by `runParam` when `token` is its run token and the token is live (not expired) and unspent
 * (no birth report believed yet); otherwise null, whatever the reason: callers answer every null the same.
 * The token's SHA-256 is compared in constant time, also when there is no such run.
 */
export async function liveRun(db: Kysely<DB>, runParam: unknown, token: unknown, now: Date): Promise<LiveRun | null> {
  const presented = sha256Hex(typeof token === 'string' ? token : '');
  const runId = typeof runParam === 'number' ? runParam : typeof runParam === 'string' && /^[1-9]\d{0,14}$/.test(runParam) ? Number(runParam) : null;
  const row =
    runId !== null && Number.isSafeInteger(runId) && runId > 0
      ? await withFleetRelayTables(db)
          .selectFrom('rlr_relay_runs')
          .select(['rlr_relay_run_id', 'rlr_token_hash', 'rlr_bundle_sha256', 'rlr_bundle_size_bytes', 'rlr_fbb_file_blob_id', 'rlr_expires_time', 'rlr_born_time'])
          .where('rlr_relay_run_id', '=', runId)
          .executeTakeFirst()
      : undefined;
  const matches = safeEqual(presented, row?.rlr_token_hash ?? NO_RUN_HASH);
  if (!row || !matches || typeof token !== 'string' || token === '') return null;
  if (row.rlr_born_time !== null || row.rlr_expires_time.getTime() <= now.getTime()) return null;
  return { runId: row.rlr_relay_run_id, bundleSha256: row.rlr_bundle_sha256, bundleSizeBytes: row.rlr_bundle_size_bytes, blobId: row.rlr_fbb_file_blob_id };
}

export interface BirthRecord {
  publicIp: string;
  identityPublicKey: string;
  identityFingerprint: string;
  relayVersion: string;
}

/**
 * Spends the run's token by recording the believed birth report, in one conditional update: of two reports
 * racing with the same token, exactly one is believed. False when the token was spent or expired meanwhile.
 */
export async function recordBirth(db: Kysely<DB>, runId: number, birth: BirthRecord, now: Date): Promise<boolean> {
  const row = await withFleetRelayTables(db)
    .updateTable('rlr_relay_runs')
    .set({
      rlr_born_time: now,
      rlr_public_ip: birth.publicIp,
      rlr_identity_public_key: birth.identityPublicKey,
      rlr_identity_fingerprint: birth.identityFingerprint,
      rlr_relay_version: birth.relayVersion,
      rlr_update_time: now,
    })
    .where('rlr_relay_run_id', '=', runId)
    .where('rlr_born_time', 'is', null)
    .where('rlr_expires_time', '>', now)
    .returning('rlr_relay_run_id')
    .executeTakeFirst();
  return row !== undefined;
}

/** Where the run's bundle bytes are in the blob store. */
export async function bundleKey(db: Kysely<DB>, blobId: number): Promise<string | null> {
  const row = await db.selectFrom('fbb_file_blobs').select('fbb_storage_key').where('fbb_file_blob_id', '=', blobId).executeTakeFirst();
  return row && row.fbb_storage_key !== '' ? row.fbb_storage_key : null;
}
