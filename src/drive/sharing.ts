import type { Kysely } from 'kysely';
import type { DB, DriveGrantRole } from '../db/types.js';
import { formatTimestamp } from '../lib/time.js';
import type { DriveItem } from './tree.js';

/** Who holds a grant on the item, as its owner sees it. */
export interface DriveShares {
  /** Grantee user id → role. */
  grants: Record<string, DriveGrantRole>;
  /**
   * Grantee user id → the email address the owner shared with (so they recognise the people). Only that:
   * no name or anything else the owner did not type (issue 35).
   */
  grantees: Record<string, { email: string }>;
  /** The file's public links that still work (none for folders); the token itself is never shown again. */
  links: Array<{ link_id: number; create_time: string; expires_time: string | null; has_password: boolean }>;
}

export function grantColumn(item: Pick<DriveItem, 'kind'>) {
  return item.kind === 'file' ? ('fga_fil_file_id' as const) : ('fga_fol_folder_id' as const);
}

export async function liveGrants(db: Kysely<DB>, item: Pick<DriveItem, 'kind' | 'id'>) {
  return db
    .selectFrom('fga_file_access_grants')
    .select(['fga_file_access_grant_id', 'fga_usr_user_id', 'fga_role'])
    .where(grantColumn(item), '=', item.id)
    .where('fga_delete_time', 'is', null)
    .orderBy('fga_file_access_grant_id')
    .execute();
}

export async function sharesOf(db: Kysely<DB>, item: Pick<DriveItem, 'kind' | 'id'>, now: Date): Promise<DriveShares> {
  const grants = await liveGrants(db, item);
  const users =
    grants.length === 0
      ? []
      : await db
          .selectFrom('usr_users')
          .select(['usr_user_id', 'usr_email'])
          .where('usr_user_id', 'in', grants.map((g) => g.fga_usr_user_id))
          .execute();
  const links =
    item.kind !== 'file'
      ? []
      : await db
          .selectFrom('fsl_file_share_links')
          .select(['fsl_file_share_link_id', 'fsl_create_time', 'fsl_expires_time', 'fsl_password_hash'])
          .where('fsl_fil_file_id', '=', item.id)
          .where('fsl_revoked_time', 'is', null)
          .where('fsl_delete_time', 'is', null)
          .where((eb) => eb.or([eb('fsl_expires_time', 'is', null), eb('fsl_expires_time', '>', now)]))
          .orderBy('fsl_file_share_link_id')
          .execute();
  return {
    grants: Object.fromEntries(grants.map((g) => [String(g.fga_usr_user_id), g.fga_role])),
    grantees: Object.fromEntries(users.map((u) => [String(u.usr_user_id), { email: u.usr_email }])),
    links: links.map((l) => ({
      link_id: l.fsl_file_share_link_id,
      create_time: formatTimestamp(l.fsl_create_time),
      expires_time: l.fsl_expires_time ? formatTimestamp(l.fsl_expires_time) : null,
      has_password: l.fsl_password_hash !== null,
    })),
  };
}
