import { authError } from '../http/errors.js';
import { standardTimes } from './common.js';
import { col, defineModel, type Row } from './define.js';

// Storage bookkeeping (driver, sync attempts) is the upload service's, not the client's.
//
// Drive's files (fil_source 'drive') and the assistant's attachments are managed by their actions: the
// trash, versions, grants, links, quota and blob references live there, and a raw CRUD soft delete would
// free the quota while the bytes stay forever (issue 35). CRUD writes to them are refused with the per-record
// check's error (403 AuthenticationError) naming the actions; reads stay as they are. A file of another
// upload purpose (a mail import archive) may be deleted over CRUD: its blob reference is given back by the
// reconcile task, which drops every deleted row's reference, and the bytes go with the blob sweep.

/** fil_source values whose rows only their actions change. */
const ACTION_MANAGED: Record<string, string> = {
  drive: 'Drive files are changed with the drive actions (drive_rename, drive_move, drive_trash, drive_delete_forever), not over CRUD',
  assistant_attachment: 'Assistant attachments belong to their conversation and are not changed over CRUD',
};

const STAFF = 5;

function writeCheck(row: Row, ctx: { viewer: { current_user_id: number | null; current_user_permission: number } }): boolean {
  const refusal = typeof row.fil_source === 'string' ? ACTION_MANAGED[row.fil_source] : undefined;
  if (refusal) throw authError(403, refusal);
  // Otherwise the default: the owner, or staff.
  const uid = ctx.viewer.current_user_id;
  return (uid !== null && row.fil_usr_user_id !== null && row.fil_usr_user_id !== undefined && Number(row.fil_usr_user_id) === uid) || ctx.viewer.current_user_permission >= STAFF;
}

export const File = defineModel({
  className: 'File',
  table: 'fil_files',
  prefix: 'fil',
  primaryKey: 'fil_file_id',
  owner: 'fil_usr_user_id',
  columns: {
    fil_file_id: col.serial(),
    fil_name: col.varchar(255),
    fil_title: col.varchar(255),
    fil_description: col.text(),
    fil_type: col.varchar(128),
    fil_usr_user_id: col.bigint(),
    fil_min_permission: col.smallint(),
    fil_grp_group_id: col.int(),
    fil_evt_event_id: col.int(),
    fil_tier_min_level: col.int(),
    fil_storage_driver: col.varchar(32),
    fil_sync_failed_count: col.int(),
    fil_sync_last_attempt: col.timestamp(),
    // Who manages the row (see ACTION_MANAGED); the server's, never exported or written over CRUD.
    fil_source: col.varchar(32),
    ...standardTimes('fil'),
  },
  checks: { write: writeCheck },
  exposure: {
    readable: true,
    writable: true,
    unreadable: ['fil_source'],
    unwritable: ['fil_storage_driver', 'fil_sync_failed_count', 'fil_sync_last_attempt', 'fil_name', 'fil_source'],
  },
});
