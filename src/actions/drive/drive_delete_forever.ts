import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.js';
import { recordChange } from '../../drive/changes.js';
import { deleteVersions, DRIVE_SOURCE, releaseBlob } from '../../drive/files.js';
import { defineAction } from '../define.js';
import { driveRefusal, folderSubtree, lockOwner } from '../../drive/tree.js';

/** Rows per statement when a whole folder tree goes. */
const BATCH = 500;

function batches<T>(items: T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += BATCH) out.push(items.slice(i, i + BATCH));
  return out;
}

/**
 * Deletes files for good: their kept versions go, their links stop working, their grants end, and each
 * blob reference is given back (a blob nothing references any more is removed by the blob sweep).
 */
async function deleteFiles(db: Kysely<DB>, ownerUserId: number, fileIds: number[], now: Date): Promise<void> {
  for (const ids of batches(fileIds)) {
    const files = await db.selectFrom('fil_files').select(['fil_file_id', 'fil_fbb_file_blob_id']).where('fil_file_id', 'in', ids).forUpdate().execute();
    const versions = await db.selectFrom('fvr_file_versions').select(['fvr_file_version_id', 'fvr_fbb_file_blob_id']).where('fvr_fil_file_id', 'in', ids).execute();
    await deleteVersions(db, versions);
    for (const f of files) if (f.fil_fbb_file_blob_id !== null) await releaseBlob(db, f.fil_fbb_file_blob_id);
    await db.updateTable('fil_files').set({ fil_delete_time: now, fil_update_time: now, fil_fbb_file_blob_id: null }).where('fil_file_id', 'in', ids).execute();
    await db.updateTable('fsl_file_share_links').set({ fsl_revoked_time: now, fsl_update_time: now }).where('fsl_fil_file_id', 'in', ids).where('fsl_revoked_time', 'is', null).execute();
    await db.updateTable('fga_file_access_grants').set({ fga_delete_time: now, fga_update_time: now }).where('fga_fil_file_id', 'in', ids).where('fga_delete_time', 'is', null).execute();
    for (const f of files) await recordChange(db, { ownerUserId, fileId: f.fil_file_id, kind: 'delete', time: now });
  }
}

/**
 * Deletes a file or folder from the trash for good (its owner only); a folder goes with everything in it.
 * Something not in the trash is refused (not_trashed): trash it first.
 */
export default defineAction({
  name: 'drive_delete_forever',
  description: 'Delete a trashed Drive file (file_id) or folder (folder_id) and everything in it, for good',
  requires_setting: 'drive_active',
  mutates: true,
  input: {
    file_id: { type: 'int', min: 1 },
    folder_id: { type: 'int', min: 1 },
  },
  drive_item: { need: 'owner', of: 'file_or_folder' },
  async run({ input, user: me, db, clock, item }) {
    if (!item.inTrash) throw driveRefusal('not_trashed', `"${item.name}" is not in the trash; move it to the trash first`);
    await lockOwner(db, item.ownerUserId);
    const now = clock.now();
    if (item.kind === 'file') {
      await deleteFiles(db, item.ownerUserId, [item.id], now);
      return { data: { file_id: item.id, deleted_files: 1, deleted_folders: 0 }, message: `"${item.name}" is deleted.` };
    }
    const folderIds = (await folderSubtree(db, item.id)).map((f) => f.id);
    const fileIds: number[] = [];
    for (const ids of batches(folderIds)) {
      const rows = await db.selectFrom('fil_files').select('fil_file_id').where('fil_fol_folder_id', 'in', ids).where('fil_source', '=', DRIVE_SOURCE).where('fil_delete_time', 'is', null).execute();
      fileIds.push(...rows.map((r) => r.fil_file_id));
    }
    await deleteFiles(db, item.ownerUserId, fileIds, now);
    for (const ids of batches(folderIds)) {
      await db.updateTable('fol_folders').set({ fol_delete_time: now, fol_update_time: now }).where('fol_folder_id', 'in', ids).execute();
      await db.updateTable('fga_file_access_grants').set({ fga_delete_time: now, fga_update_time: now }).where('fga_fol_folder_id', 'in', ids).where('fga_delete_time', 'is', null).execute();
    }
    for (const id of folderIds) await recordChange(db, { ownerUserId: item.ownerUserId, folderId: id, kind: 'delete', time: now });
    return {
      data: { folder_id: item.id, deleted_files: fileIds.length, deleted_folders: folderIds.length },
      message: `"${item.name}" and everything in it are deleted.`,
    };
  },
});
