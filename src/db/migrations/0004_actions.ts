import type { Kysely } from 'kysely';
import { runStatements } from './run-statements.js';

// Action support: idempotency records, single-use account codes, and the mail outbox used when no SMTP
// host is configured.
export async function up(db: Kysely<any>): Promise<void> {
  await runStatements(db, [
    // Only the SHA-256 of an Idempotency-Key is stored, scoped to the calling credential. The unique
    // (scope, hash) constraint is what makes claiming race-free across nodes.
    `create table aik_api_idempotency_keys (
      aik_api_idempotency_key_id bigserial primary key,
      aik_scope varchar(64) not null,
      aik_key_hash char(64) not null,
      aik_fingerprint char(64) not null,
      aik_action varchar(200) not null,
      aik_state varchar(10) not null check (aik_state in ('executing', 'stored')),
      aik_status int4,
      aik_body text,
      aik_create_time timestamp(6) not null default now(),
      aik_update_time timestamp(6) not null default now(),
      constraint aik_api_idempotency_keys_scope_hash unique (aik_scope, aik_key_hash)
    )`,
    `create index aik_api_idempotency_keys_create_time on aik_api_idempotency_keys (aik_create_time)`,
    // Password reset and activation codes: only a hash of the code is kept; a code is used once.
    `create table act_activation_codes (
      act_activation_code_id bigserial primary key,
      act_usr_user_id int8 not null references usr_users(usr_user_id),
      act_purpose varchar(20) not null check (act_purpose in ('password_reset', 'activation')),
      act_code_hash char(64) not null unique,
      act_expires_time timestamp(6) not null,
      act_used_time timestamp(6),
      act_create_time timestamp(6) not null default now()
    )`,
    `create index act_activation_codes_user on act_activation_codes (act_usr_user_id, act_purpose)`,
    `create table mob_mail_outbox (
      mob_mail_outbox_id bigserial primary key,
      mob_to varchar(255) not null,
      mob_from varchar(255) not null,
      mob_subject varchar(255) not null,
      mob_text text not null,
      mob_template varchar(64),
      mob_create_time timestamp(6) not null default now()
    )`,
  ]);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
