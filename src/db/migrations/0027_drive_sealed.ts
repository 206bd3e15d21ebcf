import type { Kysely } from 'kysely';
import { runStatements } from './run-statements.js';

// Sealed Drive folders (DESIGN 10 "First consumer"): a folder made with {sealed: true} seals the names and
// bytes of the files in it (and in the folders made inside it) under the owner's vault.
// - fol_is_sealed: the folder's files are sealed; folders made inside it are sealed too.
// - fil_sealed_key: the file's random content key sealed to the owner's vault public key (X25519 + HKDF +
//   AES-256-GCM, associated data `fil_files:{id}:key`); null for a plain file. Its blobs (the current
//   content and every kept version) hold the bytes encrypted under that key, in chunked AES-256-GCM frames.
// - fil_sealed_name: the file's name, AES-256-GCM under the content key (`fil_files:{id}:name`); fil_name
//   stays null for a sealed file.
// - fup_sealed_name: a pending upload's name sealed to the vault public key until completion (fup_name null).
export async function up(db: Kysely<any>): Promise<void> {
  await runStatements(db, [
    `alter table fol_folders add column fol_is_sealed bool not null default false`,
    `alter table fil_files add column fil_sealed_key text`,
    `alter table fil_files add column fil_sealed_name text`,
    `alter table fup_file_uploads add column fup_sealed_name text`,
  ]);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
