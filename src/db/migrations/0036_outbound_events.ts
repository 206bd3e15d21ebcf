import type { Kysely } from 'kysely';
import { runStatements } from './run-statements.js';

// The outbound event log (DESIGN 15): one row per membership-relevant change, written in the same
// transaction as the change (a transactional outbox). Deliveries and member emails are fanned out from
// it in that transaction too, so nothing is sent for a change that rolled back and nothing is lost in a crash.
export async function up(db: Kysely<any>): Promise<void> {
  await runStatements(db, [
    `create table obe_outbound_events (
      obe_outbound_event_id bigserial primary key,
      obe_uid varchar(40) not null,
      obe_type varchar(64) not null,
      obe_usr_user_id int4,
      obe_payload jsonb not null,
      obe_create_time timestamp(6) not null default now()
    )`,
    `create unique index obe_outbound_events_uid on obe_outbound_events (obe_uid)`,
    `create index obe_outbound_events_type on obe_outbound_events (obe_type, obe_outbound_event_id)`,
    `create index obe_outbound_events_time on obe_outbound_events (obe_create_time)`,
  ]);
}
