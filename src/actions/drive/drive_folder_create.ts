import { vaultOf } from '../../accounts/vault/vaults.js';
import { recordChange } from '../../drive/changes.js';
import { validationError } from '../../http/errors.js';
import { actingUser } from '../account/user.js';
import { defineAction } from '../define.js';
import { checkName, driveRefusal, folderNameTaken, folderWrite, lockOwner, loadFolder, nameTaken, notFound, resolveItem } from './tree.js';

/**
 * Makes a folder at the caller's root or inside a folder they own or edit. A folder made inside a shared
 * folder belongs to that folder's owner (whose tree and quota it is part of). With `sealed: true` (or
 * inside a sealed folder) the names and bytes of files placed in it are sealed under the owner's vault
 * (DESIGN 10), which must be set up; the folder's own name stays readable.
 */
export default defineAction({
  name: 'drive_folder_create',
  description: 'Create a Drive folder at your root or inside a folder (parent_id) you own or may edit; sealed: true seals the names and bytes of files placed in it under your vault',
  requires_setting: 'drive_active',
  mutates: true,
  input: {
    name: { type: 'string', required: true, max_length: 255 },
    parent_id: { type: 'int', min: 1 },
    sealed: { type: 'bool' },
  },
  async run({ input, user, db, clock, settings }) {
    const me = actingUser(user);
    const name = checkName(input.name);
    const parentId = input.parent_id ?? null;
    let ownerUserId = me.usr_user_id;
    let depth = 1;
    let sealed = input.sealed === true;
    if (parentId !== null) {
      const parent = await resolveItem(db, me.usr_user_id, { kind: 'folder', id: parentId }, 'edit');
      if (parent.inTrash) throw notFound('folder');
      ownerUserId = parent.ownerUserId;
      depth = parent.ancestors.length + 2;
      // Everything below a sealed folder is sealed.
      sealed ||= parent.sealed;
    }
    if (sealed) {
      if (ownerUserId !== me.usr_user_id) throw driveRefusal('forbidden', 'Only the owner can make folders in a sealed folder');
      if (!(await vaultOf(db, ownerUserId))) {
        throw validationError({ sealed: 'needs your vault: set it up under Profile, Security first, then make the sealed folder' });
      }
    }
    const maxDepth = settings.int('drive_max_folder_depth');
    if (depth > maxDepth) throw driveRefusal('too_deep', `Folders can be nested at most ${maxDepth} deep`, { max_depth: maxDepth });
    await lockOwner(db, ownerUserId);
    if (await folderNameTaken(db, ownerUserId, parentId, name)) throw nameTaken(name);
    const now = clock.now();
    const row = await folderWrite(name, () =>
      db
        .insertInto('fol_folders')
        .values({ fol_usr_user_id: ownerUserId, fol_fol_folder_id_parent: parentId, fol_name: name, fol_is_sealed: sealed, fol_create_time: now, fol_update_time: now })
        .returning('fol_folder_id')
        .executeTakeFirstOrThrow(),
    );
    await recordChange(db, { ownerUserId, folderId: row.fol_folder_id, kind: 'create', time: now });
    return { data: { folder: await loadFolder(db, row.fol_folder_id) }, message: sealed ? `Sealed folder "${name}" created.` : `Folder "${name}" created.` };
  },
});
