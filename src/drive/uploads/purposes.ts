import { sql, type Kysely } from 'kysely';
import type { DB } from '../../db/types.js';
import type { Settings } from '../../settings/store.js';
import { DRIVE_SOURCE } from '../files.js';
import { UPLOAD_IDLE_SECONDS } from './pending.js';

/** The upload purpose of a member CSV (DESIGN 16); its files are fil_files rows of that source. */
export const MEMBER_IMPORT_PURPOSE = 'member_import';

/**
 * What an upload is for, fixed at init (DESIGN 9). `drive` makes a Drive file or version under the
 * owner's quota; any other purpose skips folders and the dedup short-circuit and makes a plain file row
 * whose fil_source is the purpose's name. A purpose belongs to its owner (core, or a plugin) and exists
 * only while that owner is active: init refuses it, and completion refuses an upload opened before the
 * owner was turned off. Every byte a non-Drive purpose stores counts against the purpose's own limit per
 * user (its files still held plus its open uploads), since the owner's Drive plan does not bill them.
 */
export interface UploadPurpose {
  name: string;
  isDrive: boolean;
  /** The plugin that consumes the purpose's files (none: core). */
  plugin: string | null;
  /**
   * The most a non-Drive purpose holds for one user: each upload, and all its held files plus open
   * uploads together (Drive uses the owner's tier features instead).
   */
  maxBytes(settings: Settings): number;
  /** The usr_permission a user needs to upload for the purpose (0: anyone; 5: staff). */
  minUserPermission: number;
}

const PURPOSES: readonly UploadPurpose[] = [
  { name: DRIVE_SOURCE, isDrive: true, plugin: null, maxBytes: () => Number.MAX_SAFE_INTEGER, minUserPermission: 0 },
  { name: 'mail_import_archive', isDrive: false, plugin: 'mailbox', maxBytes: (s) => s.int('upload_mail_import_archive_max_bytes'), minUserPermission: 0 },
  // A member CSV to import (DESIGN 16): staff only.
  { name: MEMBER_IMPORT_PURPOSE, isDrive: false, plugin: null, maxBytes: (s) => s.int('upload_member_import_max_bytes'), minUserPermission: 5 },
];

/** Every purpose name (the init schema's options); which of them exist now depends on their owners. */
export const UPLOAD_PURPOSE_NAMES = PURPOSES.map((p) => p.name);

/** Which plugins are active now (the app's plugin registry satisfies it). */
export interface PurposeOwners {
  isActive(plugin: string): boolean;
}

/** The purposes that exist now: core's, and those of active plugins. */
export function availablePurposes(owners: PurposeOwners): UploadPurpose[] {
  return PURPOSES.filter((p) => p.plugin === null || owners.isActive(p.plugin));
}

/** The purpose of that name while its owner is active, else null. */
export function uploadPurpose(name: string, owners: PurposeOwners): UploadPurpose | null {
  return availablePurposes(owners).find((p) => p.name === name) ?? null;
}

/**
 * Bytes a non-Drive purpose holds for the user: its live files' sizes plus its open (unexpired) uploads'
 * expected sizes, leaving out `exceptUploadId` (the upload being completed). Ask under the user's quota
 * lock (lockOwnerQuota) so two inits cannot both take the last bytes.
 */
export async function purposeHeldBytes(db: Kysely<DB>, userId: number, purpose: string, opts: { now: Date; exceptUploadId?: number }): Promise<number> {
  const liveSince = new Date(opts.now.getTime() - UPLOAD_IDLE_SECONDS * 1000);
  const { rows } = await sql<{ bytes: string | number | null }>`
    select
      coalesce((select sum(fil_size_bytes) from fil_files
        where fil_usr_user_id = ${userId} and fil_source = ${purpose} and fil_delete_time is null), 0)
      + coalesce((select sum(fup_expected_bytes) from fup_file_uploads
        where fup_usr_user_id = ${userId} and fup_purpose = ${purpose} and fup_update_time > ${liveSince}
          and fup_file_upload_id <> ${opts.exceptUploadId ?? 0}), 0)
      as bytes`.execute(db);
  return Number(rows[0]?.bytes ?? 0);
}
