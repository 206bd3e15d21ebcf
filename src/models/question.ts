import { standardTimes } from './common.js';
import { col, defineModel } from './define.js';

// qst_svy_survey_id is added: a question belongs to a survey.
export const Question = defineModel({
  className: 'Question',
  table: 'qst_questions',
  prefix: 'qst',
  primaryKey: 'qst_question_id',
  owner: null,
  columns: {
    qst_question_id: col.serial(),
    qst_svy_survey_id: col.bigint(),
    qst_translation_of_question_id: col.bigint(),
    qst_language: col.int(),
    qst_question: col.text(),
    qst_options: col.text(),
    qst_validate: col.varchar(255),
    qst_type: col.int(),
    qst_config: col.jsonb(),
    qst_is_required: col.bool(),
    qst_is_published: col.bool(),
    qst_published_time: col.timestamp(),
    ...standardTimes('qst'),
  },
  exposure: { readable: true, writable: true, publicRead: true },
});
