import type { Kysely } from 'kysely';
import type { DB } from '../db/types.js';

/** What happened to a file or folder; the change feed (drive_changes) reports these names. */
export type DriveChangeKind =
  | 'create'
  | 'update'
  | 'version'
  | 'rename'
  | 'move'
  | 'trash'
  | 'restore'
  | 'delete'
  | 'share';

export type DriveChangeTarget = { fileId: number; folderId?: undefined } | { folderId: number; fileId?: undefined };

export type DriveChange = DriveChangeTarget & {
  /** Whose feed the change goes to: the owner of the file or folder. */
  ownerUserId: number;
  kind: DriveChangeKind;
  time: Date;
};

/**
 * Appends one entry to the owner's change feed. Call it inside the transaction that makes the change, so
 * a change is in the feed exactly when it happened; the entry's id is the sync cursor.
 */
export async function recordChange(trx: Kysely<DB>, change: DriveChange): Promise<number> {
  const row = await trx
    .insertInto('fch_file_changes')
    .values({
      fch_usr_user_id: change.ownerUserId,
      fch_kind: change.kind,
      fch_fil_file_id: change.fileId ?? null,
      fch_fol_folder_id: change.folderId ?? null,
      fch_create_time: change.time,
    })
    .returning('fch_file_change_id')
    .executeTakeFirstOrThrow();
  return row.fch_file_change_id;
}
