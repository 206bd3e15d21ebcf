import { recordChange } from '../../drive/changes.js';
import { defineAction } from '../define.js';
import { itemOutput, lockOwner, readerOf, sealedForOf } from '../../drive/tree.js';

/**
 * Moves a file or folder to the trash (its owner or an editor may). A trashed folder takes everything
 * inside it along: hidden from listings and from grantees until it is restored. Trashed files still count
 * toward the owner's quota until they are deleted forever. Trashing what is already in the trash changes
 * nothing.
 */
export default defineAction({
  name: 'drive_trash',
  description: 'Move a Drive file (file_id) or folder (folder_id) to the trash',
  requires_setting: 'drive_active',
  mutates: true,
  input: {
    file_id: { type: 'int', min: 1 },
    folder_id: { type: 'int', min: 1 },
  },
  drive_item: { need: 'edit', of: 'file_or_folder' },
  async run(ctx) {
    const { user: me, db, clock, item } = ctx;
    if (!item.inTrash) {
      await lockOwner(db, item.ownerUserId);
      const now = clock.now();
      if (item.kind === 'folder') {
        await db.updateTable('fol_folders').set({ fol_is_trashed: true, fol_trash_time: now, fol_update_time: now }).where('fol_folder_id', '=', item.id).execute();
        await recordChange(db, { ownerUserId: item.ownerUserId, folderId: item.id, kind: 'trash', time: now });
      } else {
        await db.updateTable('fil_files').set({ fil_is_trashed: true, fil_trash_time: now, fil_update_time: now }).where('fil_file_id', '=', item.id).execute();
        await recordChange(db, { ownerUserId: item.ownerUserId, fileId: item.id, kind: 'trash', time: now });
      }
    }
    const output = await itemOutput(db, item.kind, item.id, readerOf(ctx));
    return { data: output, ...sealedForOf(output, me.usr_user_id), message: `"${item.name}" is in the trash.` };
  },
});
