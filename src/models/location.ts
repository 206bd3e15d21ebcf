import { standardTimes } from './common.js';
import { col, defineModel } from './define.js';

export const Location = defineModel({
  className: 'Location',
  table: 'loc_locations',
  prefix: 'loc',
  primaryKey: 'loc_location_id',
  owner: null,
  columns: {
    loc_location_id: col.serial(),
    loc_name: col.varchar(255, { required: true }),
    loc_link: col.varchar(255, { required: true }),
    loc_address: col.varchar(255),
    loc_website: col.varchar(255),
    loc_description: col.text(),
    loc_short_description: col.varchar(255),
    loc_fil_file_id: col.bigint(),
    loc_is_published: col.bool(),
    ...standardTimes('loc'),
  },
  exposure: { readable: true, writable: true, publicRead: true },
  viewable: (eb) => eb('loc_is_published', '=', true),
});
