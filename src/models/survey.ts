import { standardTimes } from './common.js';
import { col, defineModel } from './define.js';

export const Survey = defineModel({
  className: 'Survey',
  table: 'svy_surveys',
  prefix: 'svy',
  primaryKey: 'svy_survey_id',
  owner: null,
  columns: {
    svy_survey_id: col.serial(),
    svy_name: col.varchar(255),
    svy_edited_time: col.timestamp(),
    ...standardTimes('svy'),
  },
  exposure: { readable: true, writable: true, publicRead: true },
});
