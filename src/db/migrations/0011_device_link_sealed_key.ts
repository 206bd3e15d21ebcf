import type { Kysely } from 'kysely';
import { runStatements } from './run-statements.js';

// Device link: the vault secret the approving user's own client sealed to the device's X25519 key
// (opaque to the server), held from approval until the first poll delivers it, then scrubbed.
export async function up(db: Kysely<any>): Promise<void> {
  await runStatements(db, [`alter table dvl_device_links add column if not exists dvl_sealed_vault_key text`]);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
