import { standardTimes } from './common.js';
import { col, defineModel } from './define.js';

// Storage bookkeeping (driver, sync attempts) is the upload service's, not the client's.
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
    ...standardTimes('fil'),
  },
  exposure: { readable: true, writable: true, unwritable: ['fil_storage_driver', 'fil_sync_failed_count', 'fil_sync_last_attempt', 'fil_name'] },
});
