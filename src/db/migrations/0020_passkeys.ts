import type { Kysely } from 'kysely';
import { runStatements } from './run-statements.js';

// Passkeys (DESIGN 10): what @simplewebauthn needs to verify later assertions (transports, AAGUID, backup
// state); a credential id is unique among live rows only, so a revoked passkey can be enrolled again.
// One WebAuthn ceremony per browser session: a new options call replaces the pending one, and verifying
// deletes it in one statement, so a challenge is used at most once.
export async function up(db: Kysely<any>): Promise<void> {
  await runStatements(db, [
    `alter table pky_passkeys add column pky_transports jsonb not null default '[]'::jsonb`,
    `alter table pky_passkeys add column pky_aaguid varchar(36)`,
    `alter table pky_passkeys add column pky_backed_up bool not null default false`,
    `alter table pky_passkeys add column pky_update_time timestamp(6)`,
    `alter table pky_passkeys drop constraint pky_passkeys_pky_credential_id_key`,
    `create unique index pky_passkeys_live_credential on pky_passkeys (pky_credential_id) where pky_delete_time is null`,
    `create table pkc_passkey_ceremonies (
      pkc_passkey_ceremony_id bigserial primary key,
      pkc_wss_web_session_id int8 not null unique references wss_web_sessions(wss_web_session_id) on delete cascade,
      pkc_kind varchar(16) not null check (pkc_kind in ('login', 'register', 'stepup')),
      pkc_challenge varchar(128) not null,
      pkc_usr_user_id int8 references usr_users(usr_user_id),
      pkc_create_time timestamp(6) not null default now(),
      pkc_expires_time timestamp(6) not null
    )`,
  ]);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
