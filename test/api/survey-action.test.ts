import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workflowTables } from '../../src/events/tables.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createEvent } from '../helpers/events.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

const post = (payload: Record<string, unknown>, headers: Record<string, string>) => t.request({ method: 'POST', url: '/api/v1/action/survey', payload, headers });
const w = () => workflowTables(t.services.db);

interface Made {
  surveyId: number;
  /** Free text, required. */
  name: number;
  /** Single choice: options red, blue. */
  colour: number;
  red: number;
  blue: number;
  /** Several choices, optional: options tea, coffee. */
  drinks: number;
  tea: number;
  coffee: number;
}

async function question(surveyId: number, text: string, o: { required?: boolean; multiple?: boolean; deleted?: boolean } = {}) {
  const q = await w()
    .insertInto('qst_questions')
    .values({
      qst_svy_survey_id: surveyId,
      qst_question: text,
      qst_is_required: o.required ?? false,
      qst_config: JSON.stringify(o.multiple ? { multiple: true } : {}),
      ...(o.deleted ? { qst_delete_time: new Date('2026-02-01T00:00:00Z') } : {}),
    })
    .returning('qst_question_id')
    .executeTakeFirstOrThrow();
  return q.qst_question_id;
}

async function option(questionId: number, label: string) {
  const row = await w()
    .insertInto('qop_question_options')
    .values({ qop_qst_question_id: questionId, qop_question_option_label: label.toUpperCase(), qop_question_option_value: label })
    .returning('qop_question_option_id')
    .executeTakeFirstOrThrow();
  return row.qop_question_option_id;
}

async function makeSurvey(o: { multipleSubmissions?: boolean; name?: string } = {}): Promise<Made> {
  const s = await w()
    .insertInto('svy_surveys')
    .values({ svy_name: o.name ?? 'Feedback', svy_allow_multiple_submissions: o.multipleSubmissions ?? false })
    .returning('svy_survey_id')
    .executeTakeFirstOrThrow();
  const surveyId = s.svy_survey_id;
  const name = await question(surveyId, 'Your name', { required: true });
  const colour = await question(surveyId, 'Favourite colour');
  const drinks = await question(surveyId, 'Drinks', { multiple: true });
  await question(surveyId, 'Retired question', { required: true, deleted: true });
  return { surveyId, name, colour, drinks, red: await option(colour, 'red'), blue: await option(colour, 'blue'), tea: await option(drinks, 'tea'), coffee: await option(drinks, 'coffee') };
}

const answersOf = (userId: number, surveyId: number) =>
  w()
    .selectFrom('sva_survey_answers')
    .select(['sva_qst_question_id', 'sva_answer', 'sva_qop_question_option_id', 'sva_svs_survey_submission_id'])
    .where('sva_usr_user_id', '=', userId)
    .where('sva_svy_survey_id', '=', surveyId)
    .orderBy('sva_survey_answer_id')
    .execute();

function expectInvalid(res: { statusCode: number; json: any }, errors: Record<string, string>) {
  expect(res.statusCode).toBe(422);
  expect(res.json.errortype).toBe('ValidationError');
  expect(res.json.validation_errors).toEqual(errors);
}

describe('survey', () => {
  it('stores the answers as SurveyAnswer rows of the acting user, one per chosen option', async () => {
    const s = await makeSurvey();
    const { headers, userId } = await t.keyHeaders();
    const res = await post({ svy_survey_id: s.surveyId, [`question_${s.name}`]: '  Ada ', [`question_${s.colour}`]: String(s.blue), [`question_${s.drinks}`]: [s.tea, s.coffee] }, headers);
    expect(res.statusCode).toBe(200);
    expect(res.json).toEqual({
      api_version: '1.0',
      success_message: 'Thank you: your answers to Feedback are saved.',
      data: { survey_id: s.surveyId, submission_id: expect.any(Number), submission_number: 1, answers: 4 },
    });
    const sub = res.json.data.submission_id;
    expect(await answersOf(userId, s.surveyId)).toEqual([
      { sva_qst_question_id: s.name, sva_answer: 'Ada', sva_qop_question_option_id: null, sva_svs_survey_submission_id: sub },
      { sva_qst_question_id: s.colour, sva_answer: 'blue', sva_qop_question_option_id: s.blue, sva_svs_survey_submission_id: sub },
      { sva_qst_question_id: s.drinks, sva_answer: 'tea', sva_qop_question_option_id: s.tea, sva_svs_survey_submission_id: sub },
      { sva_qst_question_id: s.drinks, sva_answer: 'coffee', sva_qop_question_option_id: s.coffee, sva_svs_survey_submission_id: sub },
    ]);
    // The answers are the user's own over CRUD too.
    const mine = await t.request({ method: 'GET', url: '/api/v1/SurveyAnswers?numperpage=10', headers });
    expect(mine.json.num_results).toBe(4);
  });

  it('enforces required questions, and options must belong to their question', async () => {
    const s = await makeSurvey();
    const { headers, userId } = await t.keyHeaders();
    expectInvalid(await post({ svy_survey_id: s.surveyId, [`question_${s.colour}`]: String(s.red) }, headers), { [`question_${s.name}`]: 'is required' });
    expectInvalid(await post({ svy_survey_id: s.surveyId, [`question_${s.name}`]: 'Bo', [`question_${s.colour}`]: String(s.tea) }, headers), {
      [`question_${s.colour}`]: 'is not an option of this question',
    });
    expectInvalid(await post({ svy_survey_id: s.surveyId, [`question_${s.name}`]: 'Bo', [`question_${s.colour}`]: [s.red, s.blue], question_999999: 'x' }, headers), {
      [`question_${s.colour}`]: 'takes one option',
      question_999999: 'is not a question of this survey',
    });
    expectInvalid(await post({ [`question_${s.name}`]: 'Bo' }, headers), { svy_survey_id: 'is required' });
    expect(await answersOf(userId, s.surveyId)).toEqual([]);
  });

  it('takes one submission per user, unless the survey allows more', async () => {
    const once = await makeSurvey({ name: 'Census' });
    const { headers, userId } = await t.keyHeaders();
    const body = { svy_survey_id: once.surveyId, [`question_${once.name}`]: 'Cy' };
    expect((await post(body, headers)).statusCode).toBe(200);
    const again = await post(body, headers);
    expect(again.statusCode).toBe(422);
    expect(again.json).toMatchObject({ errortype: 'ActionError', error: 'You have already answered Census' });
    expect(await answersOf(userId, once.surveyId)).toHaveLength(1);
    // Another user is not affected.
    expect((await post(body, (await t.keyHeaders()).headers)).statusCode).toBe(200);

    const many = await makeSurvey({ multipleSubmissions: true });
    const manyBody = { svy_survey_id: many.surveyId, [`question_${many.name}`]: 'Di' };
    expect((await post(manyBody, headers)).json.data.submission_number).toBe(1);
    expect((await post(manyBody, headers)).json.data.submission_number).toBe(2);
    expect(await answersOf(userId, many.surveyId)).toHaveLength(2);
  });

  it('refuses a deleted or unknown survey', async () => {
    const s = await makeSurvey();
    await w().updateTable('svy_surveys').set({ svy_delete_time: new Date('2026-02-01T00:00:00Z') }).where('svy_survey_id', '=', s.surveyId).execute();
    const { headers } = await t.keyHeaders();
    for (const id of [s.surveyId, 999_999]) {
      const res = await post({ svy_survey_id: id, [`question_${s.name}`]: 'x' }, headers);
      expect(res.statusCode).toBe(422);
      expect(res.json).toMatchObject({ errortype: 'ActionError', error: 'That survey is not available' });
    }
  });

  it('marks the user registrations of events that ask the survey as completed', async () => {
    const s = await makeSurvey();
    const eventId = await createEvent(t);
    await w().updateTable('evt_events').set({ evt_svy_survey_id: s.surveyId }).where('evt_event_id', '=', eventId).execute();
    const { headers } = await t.keyHeaders();
    const reg = await t.request({ method: 'POST', url: '/api/v1/action/event_register', payload: { evt_event_id: eventId }, headers });
    const regId = reg.json.data.event_registrant_id;
    expect((await post({ svy_survey_id: s.surveyId, [`question_${s.name}`]: 'Ed' }, headers)).statusCode).toBe(200);
    const row = await w().selectFrom('evr_event_registrants').select('evr_survey_completed').where('evr_event_registrant_id', '=', regId).executeTakeFirstOrThrow();
    expect(row.evr_survey_completed).toBe(true);
  });

  it('serves a form whose fields are the action inputs: the survey id and one field per question', async () => {
    const s = await makeSurvey();
    const { headers } = await t.keyHeaders();
    const res = await t.request({ method: 'GET', url: `/api/v1/form/survey?svy_survey_id=${s.surveyId}`, headers });
    expect(res.statusCode).toBe(200);
    expect(res.json.data).toEqual({
      schema_version: 1,
      form: { name: 'survey', submit_to: '/api/v1/action/survey', submit_label: 'Submit answers' },
      fields: [
        { type: 'hidden', name: 'svy_survey_id', label: '', value: s.surveyId },
        { type: 'textarea', name: `question_${s.name}`, label: 'Your name', value: '', required: true, maxlength: 5000 },
        { type: 'radio', name: `question_${s.colour}`, label: 'Favourite colour', value: null, required: false, options: [{ value: String(s.red), label: 'RED' }, { value: String(s.blue), label: 'BLUE' }] },
        { type: 'checkbox_list', name: `question_${s.drinks}`, label: 'Drinks', value: [], required: false, options: [{ value: String(s.tea), label: 'TEA' }, { value: String(s.coffee), label: 'COFFEE' }] },
      ],
    });
    // Submitting the form's own field values back is accepted.
    const body = Object.fromEntries(res.json.data.fields.map((f: any) => [f.name, f.options ? f.options[0].value : f.value || 'Fay']));
    expect((await post(body, headers)).statusCode).toBe(200);
    const missing = await t.request({ method: 'GET', url: '/api/v1/form/survey?svy_survey_id=999999', headers });
    expect(missing.statusCode).toBe(422);
    expect(missing.json.errortype).toBe('ActionError');
  });
});
