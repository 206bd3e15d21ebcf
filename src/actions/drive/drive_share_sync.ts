import { sql } from 'kysely';
import type { DriveGrantRole } from '../../db/types.js';
import { recordChange } from '../../drive/changes.js';
import { validationError } from '../../http/errors.js';
import { defineAction } from '../define.js';
import { liveGrants, sharesOf } from '../../drive/sharing.js';
import { driveRefusal, lockOwner } from '../../drive/tree.js';

const ROLES: readonly DriveGrantRole[] = ['viewer', 'editor'];
/** More grantees than anyone shares one item with by hand; bounds the statement sizes. */
const MAX_GRANTEES = 200;

/**
 * Sets the whole grant set of a file or folder of the caller's: `grants` maps each grantee (an email
 * address; a user id only for a current grantee) to 'viewer' or 'editor'; anyone not named loses their grant. A grant on a folder
 * reaches everything inside it. Editors may rename, move and upload into what they edit (the owner is
 * billed); viewers only read.
 */
export default defineAction({
  name: 'drive_share_sync',
  description: 'Set who a Drive file (file_id) or folder (folder_id) of yours is shared with: grants {"<email>": "viewer"|"editor"} (a user id only for someone already shared with); anyone left out is revoked',
  requires_setting: 'drive_active',
  mutates: true,
  input: {
    file_id: { type: 'int', min: 1 },
    folder_id: { type: 'int', min: 1 },
    grants: { type: 'object', required: true },
  },
  drive_item: { need: 'owner', of: 'file_or_folder' },
  async run({ input, user: me, db, clock, item }) {
    const entries = Object.entries(input.grants);
    // Sealed content opens only with its owner's vault: a grantee would get placeholders, never the content.
    if (item.sealed && entries.length > 0) {
      throw driveRefusal('sealed', 'Sealed files and folders open only with your vault: they cannot be shared with others', { sealed: true });
    }
    if (entries.length > MAX_GRANTEES) throw validationError({ grants: `must name at most ${MAX_GRANTEES} people` });

    // Who each key names. A new grantee is named by the email address the sharer typed: a bare user id
    // would let any member look up every account's address and name (issue 35). A user id is taken only
    // for someone who already holds a grant here (drive_shares keys its answer by user id, so a client
    // can send the set it read back).
    const current = await liveGrants(db, item);
    const granted = new Set(current.map((g) => g.fga_usr_user_id));
    const wanted = new Map<number, DriveGrantRole>();
    for (const [key, role] of entries) {
      if (typeof role !== 'string' || !ROLES.includes(role as DriveGrantRole)) throw validationError({ grants: `the role for '${key}' must be viewer or editor` });
      const trimmed = key.trim();
      if (/^\d{1,15}$/.test(trimmed)) {
        if (!granted.has(Number(trimmed))) throw validationError({ grants: `name the people you share with by their email address ('${trimmed}' is not someone this is shared with)` });
        wanted.set(Number(trimmed), role as DriveGrantRole);
        continue;
      }
      const row = await db
        .selectFrom('usr_users')
        .select('usr_user_id')
        .where('usr_delete_time', 'is', null)
        .where(sql<string>`lower(usr_email)`, '=', trimmed.toLowerCase())
        .executeTakeFirst();
      if (!row) throw validationError({ grants: `there is no member with the email address ${trimmed}` });
      if (row.usr_user_id === item.ownerUserId) throw validationError({ grants: `'${key}' is the owner, who always has full access` });
      wanted.set(row.usr_user_id, role as DriveGrantRole);
    }

    await lockOwner(db, item.ownerUserId);
    const now = clock.now();
    let changed = false;
    for (const g of current) {
      const role = wanted.get(g.fga_usr_user_id);
      if (role === undefined) {
        await db.updateTable('fga_file_access_grants').set({ fga_delete_time: now, fga_update_time: now }).where('fga_file_access_grant_id', '=', g.fga_file_access_grant_id).execute();
        changed = true;
      } else if (role !== g.fga_role) {
        await db.updateTable('fga_file_access_grants').set({ fga_role: role, fga_update_time: now }).where('fga_file_access_grant_id', '=', g.fga_file_access_grant_id).execute();
        changed = true;
      }
      wanted.delete(g.fga_usr_user_id);
    }
    for (const [userId, role] of wanted) {
      await db
        .insertInto('fga_file_access_grants')
        .values({ ...(item.kind === 'file' ? { fga_fil_file_id: item.id } : { fga_fol_folder_id: item.id }), fga_usr_user_id: userId, fga_role: role, fga_create_time: now, fga_update_time: now })
        .execute();
      changed = true;
    }
    if (changed) {
      await recordChange(db, { ownerUserId: item.ownerUserId, kind: 'share', time: now, ...(item.kind === 'file' ? { fileId: item.id } : { folderId: item.id }) });
    }
    return { data: { ...(await sharesOf(db, item, now)) }, message: changed ? 'Sharing updated.' : 'Sharing unchanged.' };
  },
});
