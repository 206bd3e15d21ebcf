import type { Kysely, Selectable } from 'kysely';
import type { DB } from '../../db/types.js';
import { randomHex, sha256Hex } from '../../lib/crypto.js';

// Pending chunked uploads (fup_file_uploads). The token is the upload's only name on the wire; the row
// keeps its SHA-256. Appends are serialised by a lease on the row rather than a transaction held open
// while bytes stream in: a chunk takes the lease, writes its bytes, and records them under the lease.
// A lease is short and renewed while its chunk is being received, and it names the process holding it
// (`{node}.{boot}.{random}`): a node that died mid-chunk leaves a lease that lapses within seconds, and
// the same node started again takes its earlier boot's leases over at once.

/** An upload with no activity this long is expired (refused, then purged by a task). */
export const UPLOAD_IDLE_SECONDS = 24 * 3600;
/**
 * A chunk's lease. The process receiving the chunk renews it every CHUNK_LEASE_RENEW_MS for as long as
 * the request lasts (at most the 60 s stall cut-off), so only a process that is gone lets it lapse.
 */
export const CHUNK_LEASE_SECONDS = 10;
export const CHUNK_LEASE_RENEW_MS = 2_500;

/** Who takes leases: this node (its DATA_DIR, stable across restarts) and this boot of it (one process). */
export interface LeaseHolder {
  node: string;
  boot: string;
  /** Whether another boot of this node is gone (its process no longer runs). */
  isDeadBoot(boot: string): boolean;
}

const HOLDER_PART_RE = /^[0-9a-f]{16}$/;

/**
 * The lease of a process that is gone: one that an earlier boot of this node holds (a kill -9 or a crash
 * mid-chunk, then a restart). Null for anyone else's lease, which is waited out.
 */
export function deadLease(upload: Pick<PendingUpload, 'leaseToken'>, holder: LeaseHolder): string | null {
  const [node, boot] = (upload.leaseToken ?? '').split('.');
  if (node !== holder.node || boot === undefined || boot === holder.boot || !holder.isDeadBoot(boot)) return null;
  return upload.leaseToken;
}

export interface PendingUpload {
  id: number;
  purpose: string;
  /** The uploader (whose upload it is; the bill goes to the destination's owner). */
  userId: number;
  name: string | null;
  /** Into a sealed folder: the name sealed to the owner's vault (name is then null). */
  sealedName: string | null;
  mimeType: string | null;
  /** Into a sealed folder: the MIME type sealed to the owner's vault (mimeType is then null). */
  sealedMime: string | null;
  folderId: number | null;
  fileId: number | null;
  expectedBytes: number;
  expectedSha256: string | null;
  receivedBytes: number;
  receivedSha256: string | null;
  partName: string;
  /** Into a sealed folder: the upload's public key; its chunks are sealed to it as they arrive. */
  sealPublicKey: string | null;
  /** The upload's secret key, sealed to the owner's vault. */
  sealedKey: string | null;
  /** The chunk lease (`{node}.{boot}.{random}`), null when no chunk is in progress. */
  leaseToken: string | null;
  /** Until when a chunk's lease holds (null: no chunk in progress). */
  leaseUntil: Date | null;
  updateTime: Date;
}

export function uploadExpiresAt(upload: { updateTime: Date }): Date {
  return new Date(upload.updateTime.getTime() + UPLOAD_IDLE_SECONDS * 1000);
}

export function isUploadExpired(upload: { updateTime: Date }, now: Date): boolean {
  return uploadExpiresAt(upload).getTime() <= now.getTime();
}

const trimmed = (s: string | null) => (s === null ? null : s.trim());

type UploadRow = Selectable<DB['fup_file_uploads']>;

function pendingUpload(row: UploadRow): PendingUpload {
  return {
    id: row.fup_file_upload_id,
    purpose: row.fup_purpose,
    userId: row.fup_usr_user_id,
    name: row.fup_name,
    sealedName: row.fup_sealed_name,
    mimeType: row.fup_mime_type,
    sealedMime: row.fup_sealed_mime,
    folderId: row.fup_fol_folder_id,
    fileId: row.fup_fil_file_id,
    expectedBytes: Number(row.fup_expected_bytes),
    expectedSha256: trimmed(row.fup_expected_sha256),
    receivedBytes: Number(row.fup_received_bytes),
    receivedSha256: trimmed(row.fup_received_sha256),
    partName: row.fup_part_name,
    sealPublicKey: row.fup_seal_public_key,
    sealedKey: row.fup_sealed_key,
    leaseToken: row.fup_lease_token,
    leaseUntil: row.fup_lease_token === null ? null : row.fup_lease_until,
    updateTime: row.fup_update_time,
  };
}

const TOKEN_RE = /^[0-9a-f]{64}$/;

/** The upload the token names, or null. */
export async function findUpload(db: Kysely<DB>, token: string, opts: { forUpdate?: boolean } = {}): Promise<PendingUpload | null> {
  if (!TOKEN_RE.test(token)) return null;
  let q = db.selectFrom('fup_file_uploads').selectAll().where('fup_token_hash', '=', sha256Hex(token));
  if (opts.forUpdate) q = q.forUpdate();
  const row = await q.executeTakeFirst();
  return row ? pendingUpload(row) : null;
}

/** What init fixes about an upload; the rest of a PendingUpload is the server's. */
export type NewUpload = Pick<PendingUpload, 'purpose' | 'userId' | 'name' | 'mimeType' | 'folderId' | 'fileId' | 'expectedBytes' | 'expectedSha256'> & {
  now: Date;
  /** Seals the name for this upload (its part name is the associated data); fup_name then stays null. */
  sealName?: (partName: string) => string;
  /** Seals the MIME type likewise; fup_mime_type then stays null. */
  sealMime?: (partName: string) => string;
  /** Makes the upload's keypair (its chunks are sealed on receipt): the public key and the sealed secret. */
  sealKeys?: (partName: string) => { publicKey: string; sealedKey: string };
};

/** Opens an upload; returns its token (shown once) and when it expires if left idle. */
export async function createUpload(db: Kysely<DB>, u: NewUpload): Promise<{ token: string; expiresTime: Date }> {
  const token = randomHex(32);
  const partName = `${randomHex(16)}.part`;
  const sealedName = u.sealName && u.name !== null ? u.sealName(partName) : null;
  const sealedMime = u.sealMime && u.mimeType !== null ? u.sealMime(partName) : null;
  const keys = u.sealKeys ? u.sealKeys(partName) : null;
  await db
    .insertInto('fup_file_uploads')
    .values({
      fup_token_hash: sha256Hex(token),
      fup_purpose: u.purpose,
      fup_usr_user_id: u.userId,
      fup_name: sealedName !== null ? null : u.name,
      fup_sealed_name: sealedName,
      fup_mime_type: sealedMime !== null ? null : u.mimeType,
      fup_sealed_mime: sealedMime,
      fup_fol_folder_id: u.folderId,
      fup_fil_file_id: u.fileId,
      fup_expected_bytes: u.expectedBytes,
      fup_expected_sha256: u.expectedSha256,
      // A zero-byte upload has all its bytes from the start.
      fup_received_sha256: u.expectedBytes === 0 ? sha256Hex('') : null,
      fup_part_name: partName,
      fup_seal_public_key: keys?.publicKey ?? null,
      fup_sealed_key: keys?.sealedKey ?? null,
      fup_create_time: u.now,
      fup_update_time: u.now,
    })
    .execute();
  return { token, expiresTime: uploadExpiresAt({ updateTime: u.now }) };
}

/**
 * Takes the chunk lease of `userId`'s live (unexpired) upload that the token names, in one statement (a
 * chunk's first database round trip, on every chunk). A lease is free when none is held, when it lapsed,
 * or when it is exactly `takeOver` (a dead process's lease: deadLease). Null when there is no such
 * upload, or another chunk holds its lease: findUpload then tells which.
 */
export async function leaseUpload(
  db: Kysely<DB>,
  token: string,
  userId: number,
  holder: LeaseHolder,
  now: Date,
  takeOver: string | null = null,
): Promise<{ upload: PendingUpload; lease: string } | null> {
  if (!TOKEN_RE.test(token)) return null;
  if (!HOLDER_PART_RE.test(holder.node) || !HOLDER_PART_RE.test(holder.boot)) throw new Error('not a lease holder');
  const lease = `${holder.node}.${holder.boot}.${randomHex(8)}`;
  const row = await db
    .updateTable('fup_file_uploads')
    .set({ fup_lease_token: lease, fup_lease_until: new Date(now.getTime() + CHUNK_LEASE_SECONDS * 1000) })
    .where('fup_token_hash', '=', sha256Hex(token))
    .where('fup_usr_user_id', '=', userId)
    .where('fup_update_time', '>', new Date(now.getTime() - UPLOAD_IDLE_SECONDS * 1000))
    .where((eb) =>
      eb.or([
        eb('fup_lease_token', 'is', null),
        eb('fup_lease_until', '<', now),
        ...(takeOver !== null ? [eb('fup_lease_token', '=', takeOver)] : []),
      ]),
    )
    .returningAll()
    .executeTakeFirst();
  return row ? { upload: pendingUpload(row), lease } : null;
}

/** Extends a held lease by CHUNK_LEASE_SECONDS from now; false when it is no longer held. */
export async function renewLease(db: Kysely<DB>, uploadId: number, lease: string, now: Date): Promise<boolean> {
  const result = await db
    .updateTable('fup_file_uploads')
    .set({ fup_lease_until: new Date(now.getTime() + CHUNK_LEASE_SECONDS * 1000) })
    .where('fup_file_upload_id', '=', uploadId)
    .where('fup_lease_token', '=', lease)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Whole seconds until a held lease lapses (at least 1): how long a refused chunk should wait. */
export function leaseRetryAfter(upload: Pick<PendingUpload, 'leaseUntil'>, now: Date): number {
  if (upload.leaseUntil === null) return 1;
  return Math.max(1, Math.ceil((upload.leaseUntil.getTime() - now.getTime()) / 1000));
}

export async function releaseLease(db: Kysely<DB>, uploadId: number, lease: string): Promise<void> {
  await db
    .updateTable('fup_file_uploads')
    .set({ fup_lease_token: null, fup_lease_until: null })
    .where('fup_file_upload_id', '=', uploadId)
    .where('fup_lease_token', '=', lease)
    .execute();
}

/**
 * Records the bytes now held (and, once they are all there, the server's SHA-256 of them) and gives the
 * lease back. False when the lease was lost: the caller's bytes are not counted.
 */
export async function recordReceived(
  db: Kysely<DB>,
  uploadId: number,
  lease: string,
  received: { bytes: number; sha256: string | null; now: Date },
): Promise<boolean> {
  const result = await db
    .updateTable('fup_file_uploads')
    .set({
      fup_received_bytes: received.bytes,
      fup_received_sha256: received.sha256,
      fup_lease_token: null,
      fup_lease_until: null,
      fup_update_time: received.now,
    })
    .where('fup_file_upload_id', '=', uploadId)
    .where('fup_lease_token', '=', lease)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Lowers received_bytes to what the part file really holds (after a crash lost unsynced bytes). */
export async function lowerReceived(db: Kysely<DB>, uploadId: number, lease: string, bytes: number): Promise<void> {
  await db
    .updateTable('fup_file_uploads')
    .set({ fup_received_bytes: bytes, fup_received_sha256: null })
    .where('fup_file_upload_id', '=', uploadId)
    .where('fup_lease_token', '=', lease)
    .execute();
}

export async function deleteUpload(db: Kysely<DB>, uploadId: number): Promise<void> {
  await db.deleteFrom('fup_file_uploads').where('fup_file_upload_id', '=', uploadId).execute();
}

/** Uploads idle since before `before`, oldest first. */
export async function idleUploads(db: Kysely<DB>, before: Date, limit: number): Promise<Array<{ id: number; partName: string }>> {
  const rows = await db
    .selectFrom('fup_file_uploads')
    .select(['fup_file_upload_id', 'fup_part_name'])
    .where('fup_update_time', '<', before)
    .orderBy('fup_update_time')
    .limit(limit)
    .execute();
  return rows.map((r) => ({ id: r.fup_file_upload_id, partName: r.fup_part_name }));
}
