import type { Kysely } from 'kysely';
import { runStatements } from './run-statements.js';

// Every write to what an authenticated request's principal is read from (the key, its user, the user's
// tier membership and tiers) notifies 'gatehouse_principal_changes', once per transaction (PostgreSQL
// folds equal notifications). Servers cache principals and forget them on this notification, so a key
// revoked or a user disabled by another process (the CLI, another node) stops working at once.
const TABLES = ['apk_api_keys', 'usr_users', 'grm_group_members', 'sbt_subscription_tiers'];

export async function up(db: Kysely<any>): Promise<void> {
  await runStatements(db, [
    `create or replace function gh_notify_principal_changes() returns trigger language plpgsql as $$
     begin
       perform pg_notify('gatehouse_principal_changes', '');
       return null;
     end
     $$`,
    ...TABLES.map(
      (table) =>
        `create trigger ${table}_principal_changes after insert or update or delete or truncate on ${table}
         for each statement execute function gh_notify_principal_changes()`,
    ),
  ]);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
