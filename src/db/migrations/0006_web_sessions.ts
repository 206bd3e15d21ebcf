import type { Kysely } from 'kysely';
import { runStatements } from './run-statements.js';

// Website sessions: the cookie holds an opaque id; only its SHA-256 is stored. A session with no user
// is a guest (it may carry a cart). wss_login_as_usr_user_id records the staff member behind a login-as.
export async function up(db: Kysely<any>): Promise<void> {
  await runStatements(db, [
    `create table wss_web_sessions (
      wss_web_session_id bigserial primary key,
      wss_id_hash char(64) not null unique,
      wss_csrf_token varchar(64) not null,
      wss_usr_user_id int8 references usr_users(usr_user_id),
      wss_login_as_usr_user_id int8 references usr_users(usr_user_id),
      wss_context varchar(10) not null default 'web' check (wss_context in ('web', 'app')),
      wss_data jsonb not null default '{}',
      wss_create_time timestamp(6) not null default now(),
      wss_last_seen_time timestamp(6) not null default now(),
      wss_expires_time timestamp(6) not null,
      wss_delete_time timestamp(6)
    )`,
    `create index wss_web_sessions_user on wss_web_sessions (wss_usr_user_id)`,
    `create index wss_web_sessions_expires on wss_web_sessions (wss_expires_time)`,
  ]);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
