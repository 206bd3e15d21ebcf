import { sql, type Kysely } from 'kysely';
import type { DB } from '../../db/types.js';
import { businessError } from '../../http/errors.js';
import type { TierFeatureReader } from '../../tiers/index.js';
import { recordChange } from '../changes.js';
import { addVersion, createFileFromBlob, DRIVE_SOURCE, pruneVersions } from '../files.js';
import { driveLimits, driveReservedBytes, driveUsageBytes, lockOwnerQuota, quotaRefusal, type DriveLimits, type QuotaRefusal } from '../quota.js';

// Where uploaded content lands in a Drive: a new file in a folder (or the root), or a new version of a
// file. Shared by the dedup short-circuit of drive_upload_init and by drive_upload_complete, so both bill
// and version the same way.

/** Where new Drive content goes and whose quota pays for it (the destination's owner). */
export interface UploadDestination {
  ownerUserId: number;
  /** The folder of a new file (null: the owner's root); for a new version, the file's folder. */
  folderId: number | null;
  /** Set for a new version of this file. */
  fileId: number | null;
  /** The content is sealed under the owner's vault: a sealed folder's new file, or a sealed file's version. */
  sealed: boolean;
}

const REFUSAL_MESSAGES: Record<QuotaRefusal, string> = {
  uploads_unavailable: 'Your plan does not include Drive uploads',
  file_too_large: 'The file is larger than your plan allows',
  quota_exceeded: 'There is not enough space left in your Drive',
};

/** Bytes that usage grows by when `sizeBytes` of new content lands at the destination (versions pruned). */
async function addedBytes(db: Kysely<DB>, dest: UploadDestination, sizeBytes: number, versioningDepth: number): Promise<number> {
  if (dest.fileId === null) return sizeBytes;
  const current = await db.selectFrom('fil_files').select('fil_size_bytes').where('fil_file_id', '=', dest.fileId).executeTakeFirstOrThrow();
  const kept = await db
    .selectFrom('fvr_file_versions')
    .select('fvr_size_bytes')
    .where('fvr_fil_file_id', '=', dest.fileId)
    .orderBy('fvr_file_version_id', 'desc')
    .execute();
  const before = [Number(current.fil_size_bytes ?? 0), ...kept.map((v) => Number(v.fvr_size_bytes))];
  const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
  // The old content becomes the newest version; only the newest `depth` versions stay.
  return sizeBytes + sum(before.slice(0, Math.max(0, versioningDepth))) - sum(before);
}

/**
 * The refusal (422 ActionError with data.reason) when `sizeBytes` of new content does not fit the owner's
 * plan, else the owner's limits. Usage is the stored bytes plus what the owner's other open uploads
 * reserve (an upload's own reservation, `uploadId` at completion, is not counted twice). Holds the owner's
 * quota lock until the transaction ends, so the check stays true until the content is placed or the
 * upload that reserves it is opened: two inits racing for the last bytes cannot both fit.
 */
export async function checkQuota(
  db: Kysely<DB>,
  reader: TierFeatureReader,
  dest: UploadDestination,
  sizeBytes: number,
  opts: { now: Date; uploadId?: number },
): Promise<DriveLimits> {
  await lockOwnerQuota(db, dest.ownerUserId);
  const limits = await driveLimits(reader, dest.ownerUserId);
  const usage =
    (await driveUsageBytes(db, dest.ownerUserId)) +
    (await driveReservedBytes(db, dest.ownerUserId, { now: opts.now, ...(opts.uploadId !== undefined ? { exceptUploadId: opts.uploadId } : {}) }));
  const refusal = quotaRefusal(limits, usage, sizeBytes, await addedBytes(db, dest, sizeBytes, limits.versioningDepth));
  if (refusal) {
    throw businessError(REFUSAL_MESSAGES[refusal], {
      reason: refusal,
      size_bytes: sizeBytes,
      max_file_bytes: limits.maxFileBytes,
      storage_bytes: limits.storageBytes,
      used_bytes: usage,
    });
  }
  return limits;
}

/**
 * Places a blob (already ingested, not yet referenced) at the destination: a new file, or a new version
 * whose old content is kept and then pruned to the owner's versioning depth. Records the change. Returns
 * the file and the blobs whose last reference went (swept later by the reconcile task).
 */
export async function placeContent(
  db: Kysely<DB>,
  p: { dest: UploadDestination; limits: DriveLimits; name: string; mimeType: string | null; blobId: number; sizeBytes: number; now: Date },
): Promise<{ fileId: number; orphanedBlobIds: number[] }> {
  if (p.dest.fileId !== null) {
    const fileId = p.dest.fileId;
    await addVersion(db, { fileId, blobId: p.blobId, sizeBytes: p.sizeBytes, mimeType: p.mimeType, time: p.now });
    const orphanedBlobIds = await pruneVersions(db, fileId, p.limits.versioningDepth);
    await recordChange(db, { ownerUserId: p.dest.ownerUserId, fileId, kind: 'version', time: p.now });
    return { fileId, orphanedBlobIds };
  }
  const fileId = await createFileFromBlob(db, {
    ownerUserId: p.dest.ownerUserId,
    source: DRIVE_SOURCE,
    name: p.name,
    folderId: p.dest.folderId,
    blobId: p.blobId,
    sizeBytes: p.sizeBytes,
    mimeType: p.mimeType,
    time: p.now,
  });
  await recordChange(db, { ownerUserId: p.dest.ownerUserId, fileId, kind: 'create', time: p.now });
  return { fileId, orphanedBlobIds: [] };
}

/**
 * A blob of this content that the user already possesses: the current content or a kept version of one
 * of their own live, plain Drive files, in this store. Nobody else's files are looked at (no existence
 * oracle), and sealed files' blobs (ciphertext) never match.
 */
export async function ownedBlobWith(db: Kysely<DB>, userId: number, content: { sha256: string; sizeBytes: number; driver: string }): Promise<number | null> {
  const { rows } = await sql<{ id: number }>`
    select b.fbb_file_blob_id as id from fbb_file_blobs b
    where b.fbb_sha256 = ${content.sha256} and b.fbb_size_bytes = ${content.sizeBytes} and b.fbb_driver = ${content.driver}
      and b.fbb_refcount > 0 and b.fbb_storage_key <> ''
      and (
        exists (select 1 from fil_files f where f.fil_fbb_file_blob_id = b.fbb_file_blob_id
          and f.fil_usr_user_id = ${userId} and f.fil_source = ${DRIVE_SOURCE} and f.fil_delete_time is null and f.fil_sealed_key is null)
        or exists (select 1 from fvr_file_versions v join fil_files f on f.fil_file_id = v.fvr_fil_file_id
          where v.fvr_fbb_file_blob_id = b.fbb_file_blob_id
          and f.fil_usr_user_id = ${userId} and f.fil_source = ${DRIVE_SOURCE} and f.fil_delete_time is null and f.fil_sealed_key is null)
      )
    limit 1`.execute(db);
  return rows[0] ? Number(rows[0].id) : null;
}
