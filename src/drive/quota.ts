import { sql, type Kysely } from 'kysely';
import type { DB } from '../db/types.js';
import { driveFeatures, type TierFeatureReader } from '../tiers/index.js';
import { DRIVE_SOURCE } from './files.js';
import { UPLOAD_IDLE_SECONDS } from './uploads/pending.js';

// Quota (DESIGN 9). The owner of the destination is billed. Usage counts every live Drive file and every
// kept version at full size (dedup saves disk, not quota), trashed files included until they are deleted
// forever. The limits are the owner's tier features; a tierless owner, or a limit of 0, has no uploads.

export type QuotaRefusal = 'uploads_unavailable' | 'file_too_large' | 'quota_exceeded';

export interface DriveLimits {
  storageBytes: number;
  maxFileBytes: number;
  versioningDepth: number;
  shareLinks: boolean;
}

export async function driveLimits(reader: TierFeatureReader, ownerUserId: number): Promise<DriveLimits> {
  return driveFeatures(reader, ownerUserId);
}

/** Bytes billed to the owner now. */
export async function driveUsageBytes(db: Kysely<DB>, ownerUserId: number): Promise<number> {
  const { rows } = await sql<{ bytes: string | number | null }>`
    select
      coalesce((select sum(fil_size_bytes) from fil_files
        where fil_usr_user_id = ${ownerUserId} and fil_source = ${DRIVE_SOURCE} and fil_delete_time is null), 0)
      + coalesce((select sum(fvr_size_bytes) from fvr_file_versions
        join fil_files on fil_file_id = fvr_fil_file_id
        where fil_usr_user_id = ${ownerUserId} and fil_source = ${DRIVE_SOURCE} and fil_delete_time is null), 0)
      as bytes`.execute(db);
  return Number(rows[0]?.bytes ?? 0);
}

/**
 * Bytes that the owner's open Drive uploads hold back (DESIGN 9, issue 35): each pending, unexpired Drive
 * upload reserves its expected size against the quota of the destination's owner (a shared folder's or
 * file's owner, else the uploader) from init until it completes or goes (expiry, purge). `exceptUploadId`
 * leaves out the upload being completed, whose reservation becomes the file.
 */
export async function driveReservedBytes(db: Kysely<DB>, ownerUserId: number, opts: { now: Date; exceptUploadId?: number }): Promise<number> {
  const liveSince = new Date(opts.now.getTime() - UPLOAD_IDLE_SECONDS * 1000);
  const { rows } = await sql<{ bytes: string | number | null }>`
    select coalesce(sum(u.fup_expected_bytes), 0) as bytes
    from fup_file_uploads u
    left join fol_folders fo on fo.fol_folder_id = u.fup_fol_folder_id
    left join fil_files ff on ff.fil_file_id = u.fup_fil_file_id
    where u.fup_purpose = ${DRIVE_SOURCE}
      and coalesce(ff.fil_usr_user_id, fo.fol_usr_user_id, u.fup_usr_user_id) = ${ownerUserId}
      and u.fup_update_time > ${liveSince}
      and u.fup_file_upload_id <> ${opts.exceptUploadId ?? 0}`.execute(db);
  return Number(rows[0]?.bytes ?? 0);
}

/**
 * Why adding a file of `fileBytes` (which adds `addedBytes` to usage: the file's size, or for a new
 * version the new content's size, the old content being kept as a version) is refused, or null.
 */
export function quotaRefusal(limits: DriveLimits, usageBytes: number, fileBytes: number, addedBytes = fileBytes): QuotaRefusal | null {
  if (limits.storageBytes <= 0 || limits.maxFileBytes <= 0) return 'uploads_unavailable';
  if (fileBytes > limits.maxFileBytes) return 'file_too_large';
  if (usageBytes + addedBytes > limits.storageBytes) return 'quota_exceeded';
  return null;
}

/** Arbitrary namespace of the per-owner quota lock among the two-key advisory locks. */
const QUOTA_LOCK_NAMESPACE = 0x44525645; // 'DRVE'

/**
 * Serialises quota decisions for one owner until the transaction ends: two completions for the same
 * owner cannot both pass a check that only one of them fits.
 */
export async function lockOwnerQuota(trx: Kysely<DB>, ownerUserId: number): Promise<void> {
  await sql`select pg_advisory_xact_lock(${QUOTA_LOCK_NAMESPACE}::int4, ${ownerUserId % 2147483647}::int4)`.execute(trx);
}
