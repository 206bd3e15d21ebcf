import type { Kysely } from 'kysely';
import { runStatements } from './run-statements.js';

// Uploads into a sealed folder are encrypted as each chunk arrives (issue 35): a pending upload there has
// a keypair of its own. Each chunk's bytes are sealed (chunked AES-256-GCM, the sealed blob layout) under
// a random key that is sealed to the upload's public key; only the owner's open vault opens the upload's
// secret key, so the part file and the shared staging hold ciphertext only.
// - fup_seal_public_key: the upload's X25519 public key (base64url); null for a plain upload.
// - fup_sealed_key: the upload's secret key sealed to the owner's vault public key (X25519 + HKDF +
//   AES-256-GCM, associated data `fup_file_uploads:{part name}:key`); re-sealed by a vault rotation.
export async function up(db: Kysely<any>): Promise<void> {
  await runStatements(db, [
    `alter table fup_file_uploads add column fup_seal_public_key text`,
    `alter table fup_file_uploads add column fup_sealed_key text`,
  ]);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
