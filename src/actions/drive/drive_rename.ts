import { recordChange } from '../../drive/changes.js';
import { lockVault } from '../../accounts/vault/vaults.js';
import { fileContentKey, sealFileName, sealFolderName } from '../../drive/sealed-files.js';
import { defineAction } from '../define.js';
import { checkName, folderNameTaken, folderWrite, itemOutput, lockOwner, nameTaken, readerOf, sealedForOf, requireOwnerUnlocked, driveRefusal } from '../../drive/tree.js';

/** Renames a file or folder the caller owns or may edit. Folder names are unique among live siblings. */
export default defineAction({
  name: 'drive_rename',
  description: 'Rename a Drive file (file_id) or folder (folder_id)',
  requires_setting: 'drive_active',
  mutates: true,
  input: {
    file_id: { type: 'int', min: 1 },
    folder_id: { type: 'int', min: 1 },
    name: { type: 'string', required: true, max_length: 255 },
  },
  drive_item: { need: 'edit', of: 'file_or_folder' },
  async run(ctx) {
    const { input, user: me, db, clock, item } = ctx;
    const name = checkName(input.name);
    // Held before the owner's Drive lock, in the order the other sealing writers take them.
    const vault = item.kind === 'folder' && item.sealed && item.ownerUserId === me.usr_user_id ? await lockVault(db, item.ownerUserId, 'seal') : null;
    await lockOwner(db, item.ownerUserId);
    const now = clock.now();
    if (item.kind === 'folder' && item.sealed) {
      // A sealed folder's name is sealed to the owner's vault under a fresh key: only the owner renames it
      // (the vault's public key suffices, so also while locked). Sealed siblings' names cannot be compared.
      if (item.ownerUserId !== me.usr_user_id) throw driveRefusal('forbidden', 'Only the owner can rename a sealed folder');
      if (!vault) throw driveRefusal('vault_locked', 'Set up your vault first', { unlock_url: '/profile/security' });
      await db
        .updateTable('fol_folders')
        .set({ ...sealFolderName(vault, item.id, name), fol_name: null, fol_update_time: now })
        .where('fol_folder_id', '=', item.id)
        .execute();
      await recordChange(db, { ownerUserId: item.ownerUserId, folderId: item.id, kind: 'rename', time: now });
    } else if (item.kind === 'folder') {
      if (!item.selfTrashed && (await folderNameTaken(db, item.ownerUserId, item.parentId, name, item.id))) throw nameTaken(name);
      await folderWrite(name, () =>
        db.updateTable('fol_folders').set({ fol_name: name, fol_update_time: now }).where('fol_folder_id', '=', item.id).execute(),
      );
      await recordChange(db, { ownerUserId: item.ownerUserId, folderId: item.id, kind: 'rename', time: now });
    } else if (item.sealed) {
      // A sealed file's name is sealed under its own content key: only the owner, unlocked, renames it.
      await requireOwnerUnlocked(ctx, item.ownerUserId);
      const row = await db.selectFrom('fil_files').select(['fil_file_id', 'fil_usr_user_id', 'fil_sealed_key', 'fil_sealed_name']).where('fil_file_id', '=', item.id).executeTakeFirstOrThrow();
      const contentKey = await fileContentKey(row, readerOf(ctx));
      if (!contentKey) throw driveRefusal('vault_locked', 'Unlock your vault to rename this sealed file', { unlock_url: '/profile/security' });
      await db.updateTable('fil_files').set({ fil_sealed_name: sealFileName(contentKey, item.id, name), fil_update_time: now }).where('fil_file_id', '=', item.id).execute();
      await recordChange(db, { ownerUserId: item.ownerUserId, fileId: item.id, kind: 'rename', time: now });
    } else {
      await db.updateTable('fil_files').set({ fil_name: name, fil_update_time: now }).where('fil_file_id', '=', item.id).execute();
      await recordChange(db, { ownerUserId: item.ownerUserId, fileId: item.id, kind: 'rename', time: now });
    }
    const output = await itemOutput(db, item.kind, item.id, readerOf(ctx));
    return { data: output, ...sealedForOf(output, me.usr_user_id), message: item.sealed ? 'Renamed.' : `Renamed to "${name}".` };
  },
});
