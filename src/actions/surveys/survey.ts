import { businessError, validationError } from '../../http/errors.js';
import { defineAction, type ActionContext } from '../define.js';
import { isUniqueViolation } from '../../db/errors.js';
import { workflowTables } from '../../events/tables.js';
import { field, type FormField } from '../form.js';
import { MAX_ANSWER_LENGTH, answerKey, readAnswers, surveyQuestions, type SurveyQuestion } from './questions.js';

const unavailable = (surveyId: unknown) => businessError('That survey is not available', { svy_survey_id: surveyId });

async function liveSurvey(db: ActionContext['db'], surveyId: number) {
  return workflowTables(db)
    .selectFrom('svy_surveys')
    .select(['svy_survey_id', 'svy_name', 'svy_allow_multiple_submissions'])
    .where('svy_survey_id', '=', surveyId)
    .where('svy_delete_time', 'is', null)
    .executeTakeFirst();
}

function questionField(q: SurveyQuestion): FormField {
  const name = answerKey(q.question_id);
  const required = { required: q.required };
  if (q.options.length === 0) return field.textarea(name, q.text, { ...required, maxlength: MAX_ANSWER_LENGTH, value: '' });
  const opts = q.options.map((o) => ({ value: String(o.option_id), label: o.label }));
  return q.multiple ? field.checkboxList(name, q.text, opts, { ...required, value: [] }) : field.radio(name, q.text, opts, required);
}

/**
 * Records one submission of a survey by the acting user: answers as SurveyAnswer rows grouped under a
 * numbered submission. Without svy_allow_multiple_submissions the number is always 1, so the unique
 * (survey, user, number) settles a second submission even when two race. Answers come under
 * question_{id} keys, the names the survey form gives its fields.
 */
export default defineAction({
  name: 'survey',
  description: 'Submit answers to a survey (fields question_{id}: text, or option ids for choice questions)',
  mutates: true,
  input: {
    svy_survey_id: { type: 'int', required: true, min: 1 },
  },
  async run(ctx) {
    const { input, db, clock } = ctx;
    const me = ctx.user;
    const now = clock.now();
    const survey = await liveSurvey(db, input.svy_survey_id);
    if (!survey) throw unavailable(input.svy_survey_id);
    const questions = await surveyQuestions(db, survey.svy_survey_id);
    if (questions.length === 0) throw unavailable(input.svy_survey_id);
    const read = readAnswers(questions, input);
    if ('errors' in read) throw validationError(read.errors);
    if (read.answers.length === 0) throw businessError('Answer at least one question');

    const name = survey.svy_name ?? 'this survey';
    const w = workflowTables(db);
    const previous = await w
      .selectFrom('svs_survey_submissions')
      .select((eb) => eb.fn.max<number>('svs_number').as('n'))
      .where('svs_svy_survey_id', '=', survey.svy_survey_id)
      .where('svs_usr_user_id', '=', me.usr_user_id)
      .executeTakeFirst();
    const count = Number(previous?.n ?? 0);
    if (count > 0 && !survey.svy_allow_multiple_submissions) throw businessError(`You have already answered ${name}`);
    const submission = await w
      .insertInto('svs_survey_submissions')
      .values({ svs_svy_survey_id: survey.svy_survey_id, svs_usr_user_id: me.usr_user_id, svs_number: survey.svy_allow_multiple_submissions ? count + 1 : 1, svs_create_time: now })
      .returning(['svs_survey_submission_id', 'svs_number'])
      .executeTakeFirstOrThrow()
      .catch((e: unknown) => {
        if (isUniqueViolation(e)) throw businessError(survey.svy_allow_multiple_submissions ? 'Another submission was being saved; send yours again' : `You have already answered ${name}`);
        throw e;
      });
    await w
      .insertInto('sva_survey_answers')
      .values(
        read.answers.map((a) => ({
          sva_svy_survey_id: survey.svy_survey_id,
          sva_qst_question_id: a.question_id,
          sva_usr_user_id: me.usr_user_id,
          sva_answer: a.text,
          sva_qop_question_option_id: a.option_id,
          sva_svs_survey_submission_id: submission.svs_survey_submission_id,
          sva_create_time: now,
        })),
      )
      .execute();
    // Registrations of events that ask this survey now count it as done.
    await w
      .updateTable('evr_event_registrants')
      .set({ evr_survey_completed: true, evr_update_time: now })
      .where('evr_usr_user_id', '=', me.usr_user_id)
      .where('evr_delete_time', 'is', null)
      .where('evr_evt_event_id', 'in', (eb) => eb.selectFrom('evt_events').select('evt_event_id').where('evt_svy_survey_id', '=', survey.svy_survey_id))
      .execute();
    return {
      data: { survey_id: survey.svy_survey_id, submission_id: submission.svs_survey_submission_id, submission_number: submission.svs_number, answers: read.answers.length },
      message: `Thank you: your answers to ${name} are saved.`,
    };
  },
  form: async ({ query, db }) => {
    const id = /^\d{1,15}$/.test(query.svy_survey_id ?? '') ? Number(query.svy_survey_id) : null;
    const survey = id === null ? undefined : await liveSurvey(db, id);
    const questions = survey ? await surveyQuestions(db, survey.svy_survey_id) : [];
    if (!survey || questions.length === 0) throw unavailable(query.svy_survey_id ?? null);
    return {
      submit_label: 'Submit answers',
      fields: [field.hidden('svy_survey_id', survey.svy_survey_id), ...questions.map(questionField)],
    };
  },
});
