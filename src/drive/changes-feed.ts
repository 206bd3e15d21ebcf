import type { Kysely } from 'kysely';
import type { DB } from '../db/types.js';
import { formatTimestamp } from '../lib/time.js';

/** How long the change feed keeps entries; purge_drive_changes deletes older ones. */
export const DRIVE_CHANGE_RETENTION_DAYS = 90;
/** Changes per answer; the client asks again from the answer's cursor. */
export const CHANGES_PER_PAGE = 500;

export const retentionHorizon = (now: Date) => new Date(now.getTime() - DRIVE_CHANGE_RETENTION_DAYS * 86_400_000);

export type DriveChangeEntry = { cursor: number; kind: string; time: string } & ({ file_id: number } | { folder_id: number });

export interface DriveChanges {
  changes: DriveChangeEntry[];
  cursor: number;
  reset: boolean;
}

/**
 * The owner's changes after `cursor`. A cursor is the id of one of the owner's own changes (or 0, the
 * start); when that change is older than the retention window (or already purged), what came after it may
 * be gone too, so the answer is a reset: no changes and the cursor of the newest change, from which the
 * client continues after listing again. Every change to an owner's Drive is written under the owner's
 * lock, so the owner's changes commit in cursor order and none appears behind a cursor already handed out.
 */
export async function changesSince(db: Kysely<DB>, ownerUserId: number, cursor: number, now: Date): Promise<DriveChanges> {
  const horizon = retentionHorizon(now);
  if (cursor > 0) {
    const seen = await db
      .selectFrom('fch_file_changes')
      .select('fch_create_time')
      .where('fch_file_change_id', '=', cursor)
      .where('fch_usr_user_id', '=', ownerUserId)
      .executeTakeFirst();
    if (!seen || seen.fch_create_time.getTime() < horizon.getTime()) {
      const newest = await db
        .selectFrom('fch_file_changes')
        .select((eb) => eb.fn.max('fch_file_change_id').as('id'))
        .where('fch_usr_user_id', '=', ownerUserId)
        .executeTakeFirst();
      return { changes: [], cursor: Number(newest?.id ?? 0), reset: true };
    }
  }
  const rows = await db
    .selectFrom('fch_file_changes')
    .select(['fch_file_change_id', 'fch_kind', 'fch_fil_file_id', 'fch_fol_folder_id', 'fch_create_time'])
    .where('fch_usr_user_id', '=', ownerUserId)
    .where('fch_file_change_id', '>', cursor)
    .where('fch_create_time', '>=', horizon)
    .orderBy('fch_file_change_id')
    .limit(CHANGES_PER_PAGE)
    .execute();
  const changes = rows.map((r): DriveChangeEntry => {
    const base = { cursor: r.fch_file_change_id, kind: r.fch_kind, time: formatTimestamp(r.fch_create_time) };
    return r.fch_fil_file_id !== null ? { ...base, file_id: r.fch_fil_file_id } : { ...base, folder_id: r.fch_fol_folder_id ?? 0 };
  });
  return { changes, cursor: changes.length > 0 ? changes[changes.length - 1]!.cursor : cursor, reset: false };
}

/** Deletes feed entries past the retention window; returns how many went. */
export async function purgeDriveChanges(db: Kysely<DB>, now: Date): Promise<number> {
  const result = await db.deleteFrom('fch_file_changes').where('fch_create_time', '<', retentionHorizon(now)).executeTakeFirst();
  return Number(result.numDeletedRows);
}
