import { lockVault, vaultOf } from '../../accounts/vault/vaults.js';
import { sealFolderName } from '../../drive/sealed-files.js';
import { recordChange } from '../../drive/changes.js';
import { validationError } from '../../http/errors.js';
import { defineAction } from '../define.js';
import { checkName, driveRefusal, folderNameTaken, folderWrite, lockOwner, loadFolder, nameTaken, notFound, readerOf, resolveItem, sealedForOf } from '../../drive/tree.js';

/**
 * Makes a folder at the caller's root or inside a folder they own or edit. A folder made inside a shared
 * folder belongs to that folder's owner (whose tree and quota it is part of). With `sealed: true` (or
 * inside a sealed folder) the names and bytes of files placed in it are sealed under the owner's vault
 * (DESIGN 10), which must be set up; the folder's own name is sealed too (sealing needs only the vault's
 * public key, so this works while the vault is locked; the answer then shows the name null).
 */
export default defineAction({
  name: 'drive_folder_create',
  description: 'Create a Drive folder at your root or inside a folder (parent_id) you own or may edit; sealed: true seals its name and the names, MIME types and bytes of files placed in it under your vault',
  requires_setting: 'drive_active',
  mutates: true,
  input: {
    name: { type: 'string', required: true, max_length: 255 },
    parent_id: { type: 'int', min: 1 },
    sealed: { type: 'bool' },
  },
  async run(ctx) {
    const { input, user: me, db, clock, settings } = ctx;
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
    // Sealed to the key current when this commits (a rotation waits for it, then re-seals the name's key).
    const vault = sealed ? await lockVault(db, ownerUserId, 'seal') : null;
    if (sealed && !vault) throw validationError({ sealed: 'needs your vault: set it up under Profile, Security first, then make the sealed folder' });
    await lockOwner(db, ownerUserId);
    // A sealed folder's name is not stored readable, so it cannot be compared with its siblings' names.
    if (!sealed && (await folderNameTaken(db, ownerUserId, parentId, name))) throw nameTaken(name);
    const now = clock.now();
    const row = await folderWrite(name, () =>
      db
        .insertInto('fol_folders')
        .values({ fol_usr_user_id: ownerUserId, fol_fol_folder_id_parent: parentId, fol_name: sealed ? null : name, fol_is_sealed: sealed, fol_create_time: now, fol_update_time: now })
        .returning('fol_folder_id')
        .executeTakeFirstOrThrow(),
    );
    if (vault) await db.updateTable('fol_folders').set(sealFolderName(vault, row.fol_folder_id, name)).where('fol_folder_id', '=', row.fol_folder_id).execute();
    await recordChange(db, { ownerUserId, folderId: row.fol_folder_id, kind: 'create', time: now });
    const folder = await loadFolder(db, row.fol_folder_id, readerOf(ctx));
    // A sealed folder's name stays out of the message (answers may be stored for an Idempotency-Key replay).
    return { data: { folder }, ...sealedForOf({ folder }, me.usr_user_id), message: sealed ? 'Sealed folder created.' : `Folder "${name}" created.` };
  },
});
