import type { Kysely } from 'kysely';
import { runStatements } from './run-statements.js';

// The sealed vault (DESIGN 10).
// - uev_user_encryption_vaults: one per user; the X25519 public key and its generation. The secret key is
//   never stored as such: only wrapped, one uew row per unlocker. uev_window_epoch is bumped to close every
//   open window of the user at once (a password change).
// - uew_user_encryption_wrappings: the secret key of one generation wrapped (AES-256-GCM, AD = the row id)
//   under a passkey's PRF output, a recovery code or a passphrase. A used recovery code keeps its row
//   (uew_used_time) so it is never accepted again; retired wraps get a delete time.
// - uvw_vault_windows: open windows when no Redis is configured; the value is sealed under a key derived
//   from the browser session's token, which the server does not keep.
export async function up(db: Kysely<any>): Promise<void> {
  await runStatements(db, [
    `create table uev_user_encryption_vaults (
      uev_user_encryption_vault_id bigserial primary key,
      uev_usr_user_id int8 not null unique references usr_users(usr_user_id) on delete cascade,
      uev_public_key varchar(64) not null,
      uev_key_generation int4 not null default 1,
      uev_window_epoch int4 not null default 0,
      uev_create_time timestamp(6) not null default now(),
      uev_update_time timestamp(6)
    )`,
    `create table uew_user_encryption_wrappings (
      uew_user_encryption_wrapping_id bigserial primary key,
      uew_uev_user_encryption_vault_id int8 not null references uev_user_encryption_vaults(uev_user_encryption_vault_id) on delete cascade,
      uew_type varchar(16) not null check (uew_type in ('passkey', 'recovery', 'passphrase')),
      uew_wrapped_key text not null,
      uew_salt varchar(64) not null,
      uew_generation int4 not null,
      uew_pky_passkey_id int8 references pky_passkeys(pky_passkey_id),
      uew_used_time timestamp(6),
      uew_create_time timestamp(6) not null default now(),
      uew_delete_time timestamp(6)
    )`,
    `create index uew_live_by_vault on uew_user_encryption_wrappings (uew_uev_user_encryption_vault_id, uew_type) where uew_delete_time is null`,
    `create table uvw_vault_windows (
      uvw_key varchar(64) primary key,
      uvw_value text not null,
      uvw_expires_time timestamp(6) not null
    )`,
    `create index uvw_expiry on uvw_vault_windows (uvw_expires_time)`,
  ]);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
