import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.js';
import { workflowTables } from '../../events/tables.js';

/** The longest free-text answer kept. */
export const MAX_ANSWER_LENGTH = 5000;
/** Answers arrive under one key per question, as the survey form names its fields. */
export const answerKey = (questionId: number) => `question_${questionId}`;
export const ANSWER_KEY = /^question_(\d{1,15})$/;

export interface SurveyOption {
  option_id: number;
  label: string;
  value: string;
}

export interface SurveyQuestion {
  question_id: number;
  text: string;
  required: boolean;
  /** Options make a choice question; qst_config {"multiple": true} lets several be chosen. */
  options: SurveyOption[];
  multiple: boolean;
}

/** The survey's live, published questions with their live options, in order. */
export async function surveyQuestions(db: Kysely<DB>, surveyId: number): Promise<SurveyQuestion[]> {
  const w = workflowTables(db);
  const questions = await w
    .selectFrom('qst_questions')
    .select(['qst_question_id', 'qst_question', 'qst_is_required', 'qst_config'])
    .where('qst_svy_survey_id', '=', surveyId)
    .where('qst_delete_time', 'is', null)
    .where((eb) => eb.or([eb('qst_is_published', 'is', null), eb('qst_is_published', '=', true)]))
    .orderBy('qst_question_id')
    .execute();
  if (questions.length === 0) return [];
  const options = await w
    .selectFrom('qop_question_options')
    .select(['qop_question_option_id', 'qop_qst_question_id', 'qop_question_option_label', 'qop_question_option_value'])
    .where('qop_qst_question_id', 'in', questions.map((q) => q.qst_question_id))
    .where('qop_delete_time', 'is', null)
    .orderBy('qop_question_option_id')
    .execute();
  return questions.map((q) => {
    const config = q.qst_config && typeof q.qst_config === 'object' ? q.qst_config : {};
    const own = options.filter((o) => o.qop_qst_question_id === q.qst_question_id);
    return {
      question_id: q.qst_question_id,
      text: q.qst_question ?? '',
      required: q.qst_is_required === true,
      multiple: config.multiple === true,
      options: own.map((o) => {
        const label = o.qop_question_option_label ?? o.qop_question_option_value ?? String(o.qop_question_option_id);
        return { option_id: o.qop_question_option_id, label, value: o.qop_question_option_value ?? label };
      }),
    };
  });
}

export type Answer = { question_id: number; text: string; option_id: number | null };

function isBlank(raw: unknown): boolean {
  return raw === undefined || raw === null || (typeof raw === 'string' && raw.trim() === '') || (Array.isArray(raw) && raw.length === 0);
}

/**
 * Checks a submission's raw fields against the questions: required questions answered, chosen options
 * among the question's own, one option unless the question takes several, text within bounds, and no
 * answer to a question the survey does not ask. Returns the answers to store, or the errors by field.
 */
export function readAnswers(questions: SurveyQuestion[], raw: Record<string, unknown>): { answers: Answer[] } | { errors: Record<string, string> } {
  const errors: Record<string, string> = {};
  const answers: Answer[] = [];
  const asked = new Set(questions.map((q) => answerKey(q.question_id)));
  for (const key of Object.keys(raw)) {
    if (ANSWER_KEY.test(key) && !asked.has(key)) errors[key] = 'is not a question of this survey';
  }
  for (const q of questions) {
    const key = answerKey(q.question_id);
    const given = raw[key];
    if (isBlank(given)) {
      if (q.required) errors[key] = 'is required';
      continue;
    }
    if (q.options.length === 0) {
      if (typeof given !== 'string' && typeof given !== 'number') {
        errors[key] = 'must be text';
        continue;
      }
      const text = String(given).trim();
      if ([...text].length > MAX_ANSWER_LENGTH) errors[key] = `must be at most ${MAX_ANSWER_LENGTH} characters`;
      else answers.push({ question_id: q.question_id, text, option_id: null });
      continue;
    }
    const picked = [...new Set((Array.isArray(given) ? given : [given]).map((v) => String(v).trim()))];
    if (!q.multiple && picked.length > 1) {
      errors[key] = 'takes one option';
      continue;
    }
    const chosen = picked.map((v) => q.options.find((o) => String(o.option_id) === v));
    if (chosen.some((o) => o === undefined)) {
      errors[key] = 'is not an option of this question';
      continue;
    }
    for (const o of chosen) answers.push({ question_id: q.question_id, text: o!.value, option_id: o!.option_id });
  }
  return Object.keys(errors).length > 0 ? { errors } : { answers };
}
