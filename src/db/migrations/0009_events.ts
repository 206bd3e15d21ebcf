import type { Kysely } from 'kysely';
import { runStatements } from './run-statements.js';

// Event, survey and booking workflows. The database has the last word on every "once only" rule, so
// concurrent requests cannot slip past a check made in application code:
// - one live registration per user and event, one live waiting-list entry per user and event;
// - a registration's chosen sessions (ers_), each session once;
// - survey submissions (svs_): one row per submission, numbered per user and survey, so a survey that
//   takes one submission per user is enforced by unique (survey, user, number = 1);
// - bookings: 0002 already makes a live (resource, start) unique.
const T = 'timestamp(6)';

export async function up(db: Kysely<any>): Promise<void> {
  await runStatements(db, [
    `create unique index evr_event_registrants_live on evr_event_registrants (evr_evt_event_id, evr_usr_user_id) where evr_delete_time is null`,
    `create unique index ewl_waiting_lists_live on ewl_waiting_lists (ewl_evt_event_id, ewl_usr_user_id) where ewl_delete_time is null`,
    `create table ers_event_registrant_sessions (
      ers_event_registrant_session_id bigserial primary key,
      ers_evr_event_registrant_id int8 not null references evr_event_registrants(evr_event_registrant_id),
      ers_evs_event_session_id int8 not null references evs_event_sessions(evs_event_session_id),
      ers_create_time ${T} not null default now(),
      unique (ers_evr_event_registrant_id, ers_evs_event_session_id)
    )`,
    `create index ers_event_registrant_sessions_session on ers_event_registrant_sessions (ers_evs_event_session_id)`,
    `alter table svy_surveys add column svy_allow_multiple_submissions bool not null default false`,
    `create table svs_survey_submissions (
      svs_survey_submission_id bigserial primary key,
      svs_svy_survey_id int8 not null references svy_surveys(svy_survey_id),
      svs_usr_user_id int8 not null references usr_users(usr_user_id),
      svs_number int4 not null default 1 check (svs_number >= 1),
      svs_create_time ${T} not null default now(),
      unique (svs_svy_survey_id, svs_usr_user_id, svs_number)
    )`,
    `create index svs_survey_submissions_user on svs_survey_submissions (svs_usr_user_id)`,
    `alter table sva_survey_answers add column sva_svs_survey_submission_id int8 references svs_survey_submissions(svs_survey_submission_id)`,
    `alter table sva_survey_answers add column sva_qop_question_option_id int8 references qop_question_options(qop_question_option_id)`,
    `create index sva_survey_answers_submission on sva_survey_answers (sva_svs_survey_submission_id)`,
  ]);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
