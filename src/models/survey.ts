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
    /** Added (0009): whether a user may submit the survey more than once (the survey action). */
    svy_allow_multiple_submissions: col.bool(),
    ...standardTimes('svy'),
  },
  exposure: { readable: true, writable: true, publicRead: true },
});
