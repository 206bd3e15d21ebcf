import { standardTimes } from './common.js';
import { col, defineModel } from './define.js';

// Not in DESIGN's exposure table, so 404 over CRUD.
export const PhoneNumber = defineModel({
  className: 'PhoneNumber',
  table: 'phn_phone_numbers',
  prefix: 'phn',
  primaryKey: 'phn_phone_number_id',
  owner: 'phn_usr_user_id',
  columns: {
    phn_phone_number_id: col.serial(),
    phn_phone_number: col.varchar(30, { required: true }),
    phn_is_private: col.bool(),
    phn_is_verified: col.bool(),
    phn_usr_user_id: col.bigint({ required: true }),
    phn_phone_carrier: col.varchar(64),
    phn_is_default: col.bool(),
    phn_cco_country_code_id: col.int(),
    ...standardTimes('phn'),
  },
  exposure: { readable: false, writable: false },
});
