import { standardTimes } from './common.js';
import { col, defineModel } from './define.js';

export const QuestionOption = defineModel({
  className: 'QuestionOption',
  table: 'qop_question_options',
  prefix: 'qop',
  primaryKey: 'qop_question_option_id',
  owner: null,
  columns: {
    qop_question_option_id: col.serial(),
    qop_qst_question_id: col.bigint({ required: true }),
    qop_question_option_label: col.varchar(255),
    qop_question_option_value: col.varchar(255),
    qop_edited_time: col.timestamp(),
    ...standardTimes('qop'),
  },
  exposure: { readable: true, writable: true, publicRead: true },
});
