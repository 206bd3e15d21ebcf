import { standardTimes } from './common.js';
import { col, defineModel } from './define.js';

// Not in DESIGN's exposure table: 404 on every CRUD verb (waiting-list changes are event actions).
// ewl_evt_event_id is added: a waiting list entry belongs to one event.
export const WaitingList = defineModel({
  className: 'WaitingList',
  table: 'ewl_waiting_lists',
  prefix: 'ewl',
  primaryKey: 'ewl_waiting_list_id',
  owner: 'ewl_usr_user_id',
  columns: {
    ewl_waiting_list_id: col.serial(),
    ewl_evt_event_id: col.bigint({ required: true }),
    ewl_usr_user_id: col.bigint({ required: true }),
    ...standardTimes('ewl'),
  },
  exposure: { readable: false, writable: false },
});
