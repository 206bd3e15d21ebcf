import type { ColumnType, Generated, Kysely } from 'kysely';
import type { DB, GeneratedTimestamp, Json, Timestamp } from '../db/types.js';

// The tables the event, survey and booking actions query, typed for those queries only (columns they
// read or write). Kept beside the actions rather than in db/types.ts: the generic CRUD engine serves
// these tables from model declarations, and no other service queries them by hand.

type Nullable<T> = T | null;
/** A nullable column the insert may omit. */
type Optional<T> = ColumnType<T | null, T | null | undefined, T | null>;

export interface EventsTable {
  evt_event_id: Generated<number>;
  evt_name: string;
  evt_is_accepting_signups: Optional<boolean>;
  evt_status: Optional<number>;
  evt_visibility: Optional<number>;
  evt_max_signups: Optional<number>;
  evt_allow_waiting_list: Optional<boolean>;
  evt_session_display_type: Optional<number>;
  evt_start_time: Optional<Date>;
  evt_end_time: Optional<Date>;
  evt_svy_survey_id: Optional<number>;
  evt_tier_min_level: Optional<number>;
  evt_tier_public_after_hours: Optional<number>;
  evt_create_time: GeneratedTimestamp;
  evt_delete_time: Nullable<Timestamp>;
}

export interface EventRegistrantsTable {
  evr_event_registrant_id: Generated<number>;
  evr_evt_event_id: number;
  evr_usr_user_id: number;
  evr_survey_completed: Generated<boolean>;
  evr_create_time: GeneratedTimestamp;
  evr_update_time: GeneratedTimestamp;
  evr_delete_time: Optional<Date>;
}

export interface EventSessionsTable {
  evs_event_session_id: Generated<number>;
  evs_evt_event_id: number;
  evs_title: Optional<string>;
  evs_start_time: Optional<Date>;
  evs_order: Optional<number>;
  evs_session_number: Optional<number>;
  evs_tier_min_level: Optional<number>;
  evs_create_time: GeneratedTimestamp;
  evs_delete_time: Optional<Date>;
}

export interface WaitingListsTable {
  ewl_waiting_list_id: Generated<number>;
  ewl_evt_event_id: number;
  ewl_usr_user_id: number;
  ewl_create_time: GeneratedTimestamp;
  ewl_update_time: GeneratedTimestamp;
  ewl_delete_time: Optional<Date>;
}

export interface RegistrantSessionsTable {
  ers_event_registrant_session_id: Generated<number>;
  ers_evr_event_registrant_id: number;
  ers_evs_event_session_id: number;
  ers_create_time: GeneratedTimestamp;
}

export interface EventProductsTable {
  pro_product_id: Generated<number>;
  pro_name: string;
  pro_evt_event_id: Optional<number>;
  pro_is_active: Optional<boolean>;
  pro_delete_time: Optional<Date>;
}

export interface SurveysTable {
  svy_survey_id: Generated<number>;
  svy_name: Optional<string>;
  svy_allow_multiple_submissions: Generated<boolean>;
  svy_delete_time: Optional<Date>;
}

export interface QuestionsTable {
  qst_question_id: Generated<number>;
  qst_svy_survey_id: Optional<number>;
  qst_question: Optional<string>;
  qst_config: Json<Record<string, unknown> | null>;
  qst_is_required: Optional<boolean>;
  qst_is_published: Optional<boolean>;
  qst_delete_time: Optional<Date>;
}

export interface QuestionOptionsTable {
  qop_question_option_id: Generated<number>;
  qop_qst_question_id: number;
  qop_question_option_label: Optional<string>;
  qop_question_option_value: Optional<string>;
  qop_delete_time: Optional<Date>;
}

export interface SurveySubmissionsTable {
  svs_survey_submission_id: Generated<number>;
  svs_svy_survey_id: number;
  svs_usr_user_id: number;
  svs_number: number;
  svs_create_time: GeneratedTimestamp;
}

export interface SurveyAnswersTable {
  sva_survey_answer_id: Generated<number>;
  sva_svy_survey_id: Optional<number>;
  sva_qst_question_id: number;
  sva_usr_user_id: Optional<number>;
  sva_answer: Optional<string>;
  sva_svs_survey_submission_id: Optional<number>;
  sva_qop_question_option_id: Optional<number>;
  sva_create_time: GeneratedTimestamp;
}

export interface BookingResourcesTable {
  bkr_booking_resource_id: Generated<number>;
  bkr_name: string;
  bkr_weekly_availability: Json<unknown>;
  bkr_slot_minutes: Generated<number>;
  bkr_delete_time: Optional<Date>;
}

export interface BookingsTable {
  bkg_booking_id: Generated<number>;
  bkg_bkr_booking_resource_id: number;
  bkg_usr_user_id: number;
  bkg_start_time: Timestamp;
  bkg_end_time: Timestamp;
  bkg_status: Generated<'confirmed' | 'cancelled'>;
  bkg_create_time: GeneratedTimestamp;
  bkg_update_time: GeneratedTimestamp;
  bkg_delete_time: Optional<Date>;
}

export interface WorkflowDB {
  usr_users: DB['usr_users'];
  evt_events: EventsTable;
  evr_event_registrants: EventRegistrantsTable;
  evs_event_sessions: EventSessionsTable;
  ewl_waiting_lists: WaitingListsTable;
  ers_event_registrant_sessions: RegistrantSessionsTable;
  pro_products: EventProductsTable;
  svy_surveys: SurveysTable;
  qst_questions: QuestionsTable;
  qop_question_options: QuestionOptionsTable;
  svs_survey_submissions: SurveySubmissionsTable;
  sva_survey_answers: SurveyAnswersTable;
  bkr_booking_resources: BookingResourcesTable;
  bkg_bookings: BookingsTable;
}

/**
 * The same connection (or transaction) seen through the workflow tables' types. The tables exist (0002,
 * 0009); only the compile-time view changes, so other branches' additions to DB cannot conflict with it.
 */
export function workflowTables(db: Kysely<DB>): Kysely<WorkflowDB> {
  return db as unknown as Kysely<WorkflowDB>;
}

