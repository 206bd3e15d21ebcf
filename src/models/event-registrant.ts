import { standardTimes } from './common.js';
import { col, defineModel } from './define.js';

// Registration is workflow (payment, capacity, waiting list): written by actions, never over CRUD.
export const EventRegistrant = defineModel({
  className: 'EventRegistrant',
  table: 'evr_event_registrants',
  prefix: 'evr',
  primaryKey: 'evr_event_registrant_id',
  owner: 'evr_usr_user_id',
  columns: {
    evr_event_registrant_id: col.serial(),
    evr_evt_event_id: col.bigint({ required: true }),
    evr_usr_user_id: col.bigint({ required: true }),
    evr_ord_order_id: col.bigint(),
    evr_expires_time: col.timestamp(),
    evr_odi_order_item_id: col.bigint(),
    evr_grp_group_id: col.int(),
    evr_survey_completed: col.bool(),
    ...standardTimes('evr'),
  },
  exposure: { readable: true, writable: false },
});
