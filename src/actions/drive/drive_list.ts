import { defineAction } from '../define.js';
import { listDrive } from '../../drive/listing.js';
import { readerOf, sealedForOf } from '../../drive/tree.js';

/** The contract's collection paging: page is 0-based, numperpage defaults to 3. */
export const DEFAULT_NUMPERPAGE = 3;
export const MAX_NUMPERPAGE = 1000;

/**
 * Lists folders (first) and files: a folder's contents, the caller's root, the trash (trashed: true, all
 * that the caller trashed), or what others shared with the caller (shared: true).
 */
export default defineAction({
  name: 'drive_list',
  description: 'List Drive folders and files: a folder (folder_id), your root, your trash (trashed) or what is shared with you (shared)',
  requires_setting: 'drive_active',
  mutates: false,
  input: {
    folder_id: { type: 'int', min: 1 },
    trashed: { type: 'bool' },
    shared: { type: 'bool' },
    page: { type: 'int', min: 0 },
    numperpage: { type: 'int', min: 1, max: MAX_NUMPERPAGE },
  },
  async run(ctx) {
    const { input, user: me, db } = ctx;
    const listing = await listDrive(db, me.usr_user_id, {
      folderId: input.folder_id ?? null,
      trashed: input.trashed ?? false,
      shared: input.shared ?? false,
      page: input.page ?? 0,
      numperpage: input.numperpage ?? DEFAULT_NUMPERPAGE,
    }, readerOf(ctx));
    return { data: { folders: listing.folders, files: listing.files, num_results: listing.num_results, ...(listing.locked ? { locked: true } : {}) }, ...sealedForOf({ files: listing.files, folders: listing.folders }, me.usr_user_id) };
  },
});
