import type { Kysely } from 'kysely';
import { runStatements } from './run-statements.js';

// Member emails (DESIGN 15): template edits (the defaults live in code; a row exists once a superadmin
// changed a template or switched it), and one row per email to send, at most one per (source, template,
// recipient): the source is the outbound event's uid, or a key of its own for the renewal reminder.
// The outbox keeps the HTML part of a message too.
export async function up(db: Kysely<any>): Promise<void> {
  await runStatements(db, [
    `create table met_member_email_templates (
      met_key varchar(40) primary key,
      met_subject varchar(255) not null,
      met_body text not null,
      met_active boolean not null,
      met_update_time timestamp(6) not null default now()
    )`,
    `create table mem_member_emails (
      mem_member_email_id bigserial primary key,
      mem_source varchar(120) not null,
      mem_template varchar(40) not null,
      mem_usr_user_id int8 not null,
      mem_to varchar(255) not null,
      mem_obe_outbound_event_id int8,
      mem_data jsonb,
      mem_status varchar(10) not null default 'pending' check (mem_status in ('pending', 'sent', 'skipped', 'failed')),
      mem_attempts int4 not null default 0,
      mem_next_attempt_time timestamp(6) not null,
      mem_last_error varchar(500),
      mem_sent_time timestamp(6),
      mem_create_time timestamp(6) not null default now()
    )`,
    `create unique index mem_member_emails_once on mem_member_emails (mem_source, mem_template, mem_usr_user_id)`,
    `create index mem_member_emails_due on mem_member_emails (mem_next_attempt_time) where mem_status = 'pending'`,
    `alter table mob_mail_outbox add column mob_html text`,
    `create index mob_mail_outbox_time on mob_mail_outbox (mob_create_time, mob_mail_outbox_id)`,
  ]);
}
