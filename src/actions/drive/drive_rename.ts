import { recordChange } from '../../drive/changes.js';
import { actingUser } from '../account/user.js';
import { defineAction } from '../define.js';
import { checkName, folderNameTaken, folderWrite, itemOutput, lockOwner, nameTaken, resolveItem, targetOf } from './tree.js';

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
  async run({ input, user, db, clock }) {
    const me = actingUser(user);
    const item = await resolveItem(db, me.usr_user_id, targetOf(input), 'edit');
    const name = checkName(input.name);
    await lockOwner(db, item.ownerUserId);
    const now = clock.now();
    if (item.kind === 'folder') {
      if (!item.selfTrashed && (await folderNameTaken(db, item.ownerUserId, item.parentId, name, item.id))) throw nameTaken(name);
      await folderWrite(name, () =>
        db.updateTable('fol_folders').set({ fol_name: name, fol_update_time: now }).where('fol_folder_id', '=', item.id).execute(),
      );
      await recordChange(db, { ownerUserId: item.ownerUserId, folderId: item.id, kind: 'rename', time: now });
    } else {
      await db.updateTable('fil_files').set({ fil_name: name, fil_update_time: now }).where('fil_file_id', '=', item.id).execute();
      await recordChange(db, { ownerUserId: item.ownerUserId, fileId: item.id, kind: 'rename', time: now });
    }
    return { data: await itemOutput(db, item.kind, item.id), message: `Renamed to "${name}".` };
  },
});
