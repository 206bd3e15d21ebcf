import { standardTimes } from './common.js';
import { col, defineModel } from './define.js';

// Referenced by orders (billing address); not in DESIGN's exposure table, so 404 over CRUD.
export const Address = defineModel({
  className: 'Address',
  table: 'usa_users_addrs',
  prefix: 'usa',
  primaryKey: 'usa_users_addr_id',
  owner: 'usa_usr_user_id',
  columns: {
    usa_users_addr_id: col.serial(),
    usa_type: col.smallint(),
    usa_address1: col.varchar(128),
    usa_address2: col.varchar(64),
    usa_city: col.varchar(64),
    usa_state: col.varchar(32),
    usa_zip_code_id: col.varchar(10),
    usa_usr_user_id: col.bigint(),
    usa_is_default: col.bool(),
    usa_timezone: col.varchar(64),
    usa_cco_country_code_id: col.smallint(),
    ...standardTimes('usa'),
  },
  exposure: { readable: false, writable: false },
});
