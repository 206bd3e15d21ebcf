import { standardTimes } from './common.js';
import { col, defineModel } from './define.js';

export const MailingListRegistrant = defineModel({
  className: 'MailingListRegistrant',
  table: 'mlr_mailing_list_registrants',
  prefix: 'mlr',
  primaryKey: 'mlr_mailing_list_registrant_id',
  owner: 'mlr_usr_user_id',
  columns: {
    mlr_mailing_list_registrant_id: col.serial(),
    mlr_mlt_mailing_list_id: col.bigint({ required: true }),
    mlr_usr_user_id: col.bigint({ required: true }),
    mlr_change_time: col.timestamp(),
    ...standardTimes('mlr'),
  },
  // A registration is workflow (the list's tier gate among it): members never write it over raw CRUD,
  // which skips workflow (CRUD rule 6); staff keep CRUD.
  exposure: { readable: true, writable: true, writableBy: 'staff' },
});
