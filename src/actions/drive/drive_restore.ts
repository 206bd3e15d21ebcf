import { recordChange } from '../../drive/changes.js';
import { defineAction } from '../define.js';
import { folderNameTaken, folderWrite, itemOutput, lockOwner, nameTaken, readerOf, sealedForOf } from '../../drive/tree.js';

/**
 * Takes a file or folder out of the trash (only its owner sees the trash), with everything a restored
 * folder holds. An item restored from inside a folder that is still in the trash comes back at the top of
 * the Drive. A folder whose name is now taken beside it is refused (name_taken): rename one of them first.
 */
export default defineAction({
  name: 'drive_restore',
  description: 'Restore a Drive file (file_id) or folder (folder_id) from the trash',
  requires_setting: 'drive_active',
  mutates: true,
  input: {
    file_id: { type: 'int', min: 1 },
    folder_id: { type: 'int', min: 1 },
  },
  drive_item: { need: 'edit', of: 'file_or_folder' },
  async run(ctx) {
    const { user: me, db, clock, item } = ctx;
    if (item.inTrash) {
      await lockOwner(db, item.ownerUserId);
      const now = clock.now();
      const parentId = item.ancestors.some((f) => f.isTrashed) ? null : item.parentId;
      if (item.kind === 'folder') {
        if (!item.sealed && (await folderNameTaken(db, item.ownerUserId, parentId, item.name, item.id))) throw nameTaken(item.name);
        await folderWrite(item.name, () =>
          db
            .updateTable('fol_folders')
            .set({ fol_is_trashed: false, fol_trash_time: null, fol_fol_folder_id_parent: parentId, fol_update_time: now })
            .where('fol_folder_id', '=', item.id)
            .execute(),
        );
        await recordChange(db, { ownerUserId: item.ownerUserId, folderId: item.id, kind: 'restore', time: now });
      } else {
        await db
          .updateTable('fil_files')
          .set({ fil_is_trashed: false, fil_trash_time: null, fil_fol_folder_id: parentId, fil_update_time: now })
          .where('fil_file_id', '=', item.id)
          .execute();
        await recordChange(db, { ownerUserId: item.ownerUserId, fileId: item.id, kind: 'restore', time: now });
      }
    }
    const output = await itemOutput(db, item.kind, item.id, readerOf(ctx));
    return { data: output, ...sealedForOf(output, me.usr_user_id), message: `"${item.name}" is restored.` };
  },
});
