import { sql, type Kysely } from 'kysely';
import type { DB, DriveGrantRole } from '../db/types.js';
import { DRIVE_SOURCE } from './files.js';

// Who may do what with a Drive file or folder: its owner, or a grantee of the file itself or of any
// folder above it (the strongest grant wins). Grantees see nothing in the trash; the owner does.

export type DriveRole = 'owner' | DriveGrantRole;

export interface DriveAccess {
  role: DriveRole;
  ownerUserId: number;
  isTrashed: boolean;
}

/** Deep enough for any tree a move can build (drive_max_folder_depth); a guard, not a rule. */
const MAX_ANCESTORS = 1000;

/** The strongest grant the user holds on the file or on any folder from `folderId` up to the root. */
async function grantedRole(db: Kysely<DB>, userId: number, target: { fileId: number | null; folderId: number | null }): Promise<DriveGrantRole | null> {
  const { rows } = await sql<{ fga_role: DriveGrantRole }>`
    with recursive chain(id, parent, depth) as (
      select fol_folder_id, fol_fol_folder_id_parent, 1 from fol_folders
        where fol_folder_id = ${target.folderId} and fol_delete_time is null
      union all
      select f.fol_folder_id, f.fol_fol_folder_id_parent, c.depth + 1 from fol_folders f
        join chain c on f.fol_folder_id = c.parent
        where f.fol_delete_time is null and c.depth < ${MAX_ANCESTORS}
    )
    select fga_role from fga_file_access_grants
      where fga_usr_user_id = ${userId} and fga_delete_time is null
        and (fga_fil_file_id = ${target.fileId} or fga_fol_folder_id in (select id from chain))`.execute(db);
  if (rows.some((r) => r.fga_role === 'editor')) return 'editor';
  return rows.length > 0 ? 'viewer' : null;
}

/** The user's access to a live Drive file, or null when it does not exist for them. */
export async function fileAccess(db: Kysely<DB>, userId: number, fileId: number): Promise<DriveAccess | null> {
  const file = await db
    .selectFrom('fil_files')
    .select(['fil_usr_user_id', 'fil_fol_folder_id', 'fil_is_trashed'])
    .where('fil_file_id', '=', fileId)
    .where('fil_source', '=', DRIVE_SOURCE)
    .where('fil_delete_time', 'is', null)
    .executeTakeFirst();
  if (!file || file.fil_usr_user_id === null) return null;
  const base = { ownerUserId: file.fil_usr_user_id, isTrashed: file.fil_is_trashed };
  if (file.fil_usr_user_id === userId) return { role: 'owner', ...base };
  if (file.fil_is_trashed) return null;
  const role = await grantedRole(db, userId, { fileId, folderId: file.fil_fol_folder_id });
  return role ? { role, ...base } : null;
}

/** The user's access to a live folder, or null when it does not exist for them. */
export async function folderAccess(db: Kysely<DB>, userId: number, folderId: number): Promise<DriveAccess | null> {
  const folder = await db
    .selectFrom('fol_folders')
    .select(['fol_usr_user_id', 'fol_is_trashed'])
    .where('fol_folder_id', '=', folderId)
    .where('fol_delete_time', 'is', null)
    .executeTakeFirst();
  if (!folder) return null;
  const base = { ownerUserId: folder.fol_usr_user_id, isTrashed: folder.fol_is_trashed };
  if (folder.fol_usr_user_id === userId) return { role: 'owner', ...base };
  if (folder.fol_is_trashed) return null;
  const role = await grantedRole(db, userId, { fileId: null, folderId });
  return role ? { role, ...base } : null;
}

/** Whether the role may change content (upload into, rename, move, trash). */
export function canEdit(role: DriveRole): boolean {
  return role === 'owner' || role === 'editor';
}
