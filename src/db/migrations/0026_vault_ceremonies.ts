import type { Kysely } from 'kysely';
import { runStatements } from './run-statements.js';

// Vault ceremonies share the one-per-session passkey ceremony row; each purpose has its own kind so a
// challenge issued for unlocking cannot complete a rotation.
export async function up(db: Kysely<any>): Promise<void> {
  await runStatements(db, [
    `alter table pkc_passkey_ceremonies drop constraint pkc_passkey_ceremonies_pkc_kind_check`,
    `alter table pkc_passkey_ceremonies add constraint pkc_passkey_ceremonies_pkc_kind_check
      check (pkc_kind in ('login', 'register', 'stepup', 'vault_setup', 'vault_unlock', 'vault_add', 'vault_rotate'))`,
  ]);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
