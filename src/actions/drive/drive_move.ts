import { recordChange } from '../../drive/changes.js';
import { validationError } from '../../http/errors.js';
import { defineAction } from '../define.js';
import { driveRefusal, folderNameTaken, folderSubtree, folderWrite, itemOutput, lockOwner, nameTaken, notFound, resolveItem, type DriveItem, readerOf, sealedForOf } from '../../drive/tree.js';

/**
 * Moves a file (file_id, into folder_id) or a folder (folder_id, into parent_id); a null destination is
 * the owner's root. Items stay in their owner's Drive; a folder never moves into itself or below itself
 * (cycle), and no folder ends up deeper than drive_max_folder_depth.
 */
export default defineAction({
  name: 'drive_move',
  description: 'Move a file ({file_id, folder_id}) or a folder ({folder_id, parent_id}); a null destination is your root',
  requires_setting: 'drive_active',
  mutates: true,
  input: {
    file_id: { type: 'int', min: 1 },
    folder_id: { type: 'int', min: 1 },
    parent_id: { type: 'int', min: 1 },
  },
  async run(ctx) {
    const { input, user: me, db, clock, settings } = ctx;
    const fileId = input.file_id ?? null;
    const isFile = fileId !== null;
    const destField = isFile ? 'folder_id' : 'parent_id';
    if (!isFile && (input.folder_id ?? null) === null) {
      throw validationError({ file_id: 'give file_id (with folder_id) or folder_id (with parent_id)' });
    }
    if (input[destField] === undefined) throw validationError({ [destField]: 'is required: the destination folder, or null for the root' });
    const destId = (input[destField] as number | null) ?? null;
    const item = await resolveItem(db, me.usr_user_id, isFile ? { kind: 'file', id: fileId } : { kind: 'folder', id: input.folder_id! }, 'edit');

    let dest: DriveItem | null = null;
    if (destId === null) {
      if (item.role !== 'owner') throw driveRefusal('forbidden', "Only the owner can move items to the top of their Drive");
    } else {
      dest = await resolveItem(db, me.usr_user_id, { kind: 'folder', id: destId }, 'edit');
      if (dest.inTrash) throw notFound('folder');
      if (dest.ownerUserId !== item.ownerUserId) throw driveRefusal('forbidden', "Items can only be moved within their owner's Drive");
    }

    // Sealed content stays sealed: a file keeps its side of the boundary, and nothing plain goes into a
    // sealed folder (re-encrypting on a move would need the bytes read and written again: upload instead).
    const destSealed = dest?.sealed ?? false;
    if ((item.kind === 'file' && item.sealed !== destSealed) || (item.kind === 'folder' && destSealed && !item.sealed)) {
      throw driveRefusal('sealed', item.sealed ? 'A sealed file stays in sealed folders: download it and upload it where you want it' : 'Only sealed content goes into a sealed folder: upload the file there instead', {
        sealed: item.sealed,
        destination_sealed: destSealed,
      });
    }

    if (item.kind === 'folder') {
      if (dest && (dest.id === item.id || dest.ancestors.some((f) => f.id === item.id))) {
        throw driveRefusal('cycle', 'A folder cannot be moved into itself or into a folder inside it');
      }
      const maxDepth = settings.int('drive_max_folder_depth');
      const below = Math.max(...(await folderSubtree(db, item.id)).map((f) => f.depth));
      const depth = (dest ? dest.ancestors.length + 2 : 1) + below;
      if (depth > maxDepth) throw driveRefusal('too_deep', `Folders can be nested at most ${maxDepth} deep`, { max_depth: maxDepth });
    }

    await lockOwner(db, item.ownerUserId);
    const now = clock.now();
    if (item.kind === 'folder') {
      // A sealed folder's name is not stored readable: it has nothing to compare.
      if (!item.sealed && !item.selfTrashed && (await folderNameTaken(db, item.ownerUserId, destId, item.name, item.id))) throw nameTaken(item.name);
      await folderWrite(item.name, () =>
        db.updateTable('fol_folders').set({ fol_fol_folder_id_parent: destId, fol_update_time: now }).where('fol_folder_id', '=', item.id).execute(),
      );
      await recordChange(db, { ownerUserId: item.ownerUserId, folderId: item.id, kind: 'move', time: now });
    } else {
      await db.updateTable('fil_files').set({ fil_fol_folder_id: destId, fil_update_time: now }).where('fil_file_id', '=', item.id).execute();
      await recordChange(db, { ownerUserId: item.ownerUserId, fileId: item.id, kind: 'move', time: now });
    }
    const where = dest ? `"${dest.name}"` : 'the top of the Drive';
    const output = await itemOutput(db, item.kind, item.id, readerOf(ctx));
    return { data: output, ...sealedForOf(output, me.usr_user_id), message: `Moved "${item.name}" to ${where}.` };
  },
});
