import { standardTimes } from './common.js';
import { col, defineModel } from './define.js';

// sva_svy_survey_id is added so answers can be listed per survey.
export const SurveyAnswer = defineModel({
  className: 'SurveyAnswer',
  table: 'sva_survey_answers',
  prefix: 'sva',
  primaryKey: 'sva_survey_answer_id',
  owner: 'sva_usr_user_id',
  columns: {
    sva_survey_answer_id: col.serial(),
    sva_svy_survey_id: col.bigint(),
    sva_qst_question_id: col.bigint({ required: true }),
    sva_usr_user_id: col.bigint(),
    sva_answer: col.text(),
    ...standardTimes('sva'),
  },
  exposure: { readable: true, writable: true },
});
