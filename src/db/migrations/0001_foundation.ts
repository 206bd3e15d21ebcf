import type { Kysely } from 'kysely';
import { runStatements } from './run-statements.js';

// Users and keys come with the foundation because the operator CLI creates them; the other core models
// arrive with the model registry. Timestamps are `timestamp` holding UTC.
export async function up(db: Kysely<any>): Promise<void> {
  await runStatements(db, [
    `create table stg_settings (
      stg_setting_id bigserial primary key,
      stg_name varchar(100) not null unique,
      stg_value text,
      stg_group_name varchar(255),
      stg_usr_user_id int4,
      stg_create_time timestamp(6) not null default now(),
      stg_update_time timestamp(6) not null default now()
    )`,
    `create table usr_users (
      usr_user_id bigserial primary key,
      usr_first_name varchar(32) not null,
      usr_last_name varchar(32),
      usr_email varchar(64) not null,
      usr_signup_date date default now(),
      usr_password varchar(255),
      usr_permission int4 not null default 0,
      usr_timezone varchar(32) not null default 'America/New_York',
      usr_email_is_verified bool not null default false,
      usr_email_is_verified_time timestamp(6),
      usr_email_bounce_unverify_time timestamp(6),
      usr_is_activated bool not null default false,
      usr_is_disabled bool not null default false,
      usr_lastlogin_time timestamp(6) default now(),
      usr_pic_picture_id int4,
      usr_phn_phone_number_id int4,
      usr_contact_preferences varchar(32),
      usr_disabled_time timestamp(6),
      usr_nickname varchar(32),
      usr_authhash varchar(32),
      usr_stripe_customer_id varchar(32),
      usr_mailing_list_provider_id varchar(64),
      usr_signup_ip varchar(64),
      usr_contact_preference_last_changed timestamp(6),
      usr_organization_name varchar(32),
      usr_create_time timestamp(6) not null default now(),
      usr_update_time timestamp(6) not null default now(),
      usr_delete_time timestamp(6),
      usr_password_recovery_disabled bool,
      usr_calendly_uri varchar(255),
      usr_stripe_customer_id_test varchar(32),
      usr_allowed_ips jsonb,
      usr_remember_tokens jsonb,
      usr_force_password_change bool not null default false,
      usr_bio varchar(500),
      usr_date_of_birth date,
      usr_gender varchar(30),
      usr_profile_visibility varchar(20) default 'members_only',
      usr_totp_secret varchar(255),
      usr_totp_backup_codes jsonb,
      usr_totp_enabled_time timestamp(6),
      usr_totp_last_used_step int8,
      usr_totp_hmac_key varchar(128)
    )`,
    // One live account per address, compared case-insensitively.
    `create unique index usr_users_email_live on usr_users (lower(usr_email)) where usr_delete_time is null`,
    `create table apk_api_keys (
      apk_api_key_id bigserial primary key,
      apk_usr_user_id int8 not null references usr_users(usr_user_id),
      apk_name varchar(100),
      apk_public_key varchar(32) not null unique,
      apk_secret_hash text not null,
      apk_type varchar(10) not null check (apk_type in ('machine', 'session')),
      apk_permission int4 not null check (apk_permission between 1 and 4),
      apk_ip_restriction varchar(255),
      apk_start_time timestamp(6),
      apk_expires_time timestamp(6),
      apk_last_used_time timestamp(6),
      apk_is_active bool not null default true,
      apk_create_time timestamp(6) not null default now(),
      apk_update_time timestamp(6) not null default now(),
      apk_delete_time timestamp(6)
    )`,
    `create index apk_api_keys_user on apk_api_keys (apk_usr_user_id)`,
    `create table rql_request_logs (
      rql_request_log_id bigserial primary key,
      rql_feature varchar(50),
      rql_action varchar(100),
      rql_ip_address varchar(45),
      rql_usr_user_id int4,
      rql_api_key_type varchar(10),
      rql_was_success bool not null default true,
      rql_status_code int2,
      rql_error_type varchar(50),
      rql_note varchar(255),
      rql_response_ms int4,
      rql_create_time timestamp(6) not null default now()
    )`,
    `create index rql_request_logs_time on rql_request_logs (rql_create_time)`,
    `create table tsk_task_runs (
      tsk_name varchar(100) primary key,
      tsk_last_start_time timestamp(6),
      tsk_last_end_time timestamp(6),
      tsk_last_outcome varchar(10),
      tsk_last_error text,
      tsk_last_result jsonb,
      tsk_run_count int8 not null default 0
    )`,
    `create table plg_plugins (
      plg_name varchar(64) primary key,
      plg_is_active bool not null default false,
      plg_update_time timestamp(6) not null default now()
    )`,
  ]);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
