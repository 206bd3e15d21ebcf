import type { Action } from '../define.js';
import driveChanges from './drive_changes.js';
import driveDeleteForever from './drive_delete_forever.js';
import driveFolderCreate from './drive_folder_create.js';
import driveLinkCreate from './drive_link_create.js';
import driveLinkRevoke from './drive_link_revoke.js';
import driveList from './drive_list.js';
import driveMove from './drive_move.js';
import driveRename from './drive_rename.js';
import driveRestore from './drive_restore.js';
import driveShareSync from './drive_share_sync.js';
import driveShares from './drive_shares.js';
import driveTrash from './drive_trash.js';
import driveVersionRestore from './drive_version_restore.js';
import driveVersions from './drive_versions.js';
import driveUploadComplete from './drive_upload_complete.js';
import driveUploadInit from './drive_upload_init.js';

/** The Drive's folder, sharing, link, version and change-feed actions (all require drive_active). */
export const driveManageActions: Action[] = [
  driveFolderCreate,
  driveRename,
  driveMove,
  driveTrash,
  driveRestore,
  driveDeleteForever,
  driveList,
  driveShares,
  driveShareSync,
  driveLinkCreate,
  driveLinkRevoke,
  driveVersions,
  driveVersionRestore,
  driveChanges,
];

/** The Drive's chunked-upload actions (all require drive_active); the chunks go to /drive_upload/{token}. */
export const driveUploadActions: Action[] = [driveUploadInit, driveUploadComplete];
