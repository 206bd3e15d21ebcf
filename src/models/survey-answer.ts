import { standardTimes } from './common.js';
import { col, defineModel } from './define.js';

// sva_svy_survey_id is added so answers can be listed per survey; sva_svs_survey_submission_id groups the
// answers of one submission and sva_qop_question_option_id names the chosen option (both added by 0009).
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
    sva_svs_survey_submission_id: col.bigint(),
    sva_qop_question_option_id: col.bigint(),
    ...standardTimes('sva'),
  },
  // A submission and its chosen options are the survey action's to record; members answer through that
  // action (one submission per user), never by raw CRUD writes, which skip it (CRUD rule 6).
  exposure: { readable: true, writable: true, writableBy: 'staff', unwritable: ['sva_svs_survey_submission_id', 'sva_qop_question_option_id'] },
});
