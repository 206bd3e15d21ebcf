import type { Kysely } from 'kysely';
import { runStatements } from './run-statements.js';

// Sealed folders' own names and the MIME types of sealed files are sealed like file names (issue 35,
// DESIGN 10): a locked session sees neither.
// - fol_sealed_key: a sealed folder's random content key sealed to the owner's vault public key (X25519 +
//   HKDF + AES-256-GCM, associated data `fol_folders:{id}:key`); null for a plain folder.
// - fol_sealed_name: the folder's name, AES-256-GCM under that key (`fol_folders:{id}:name`); fol_name is
//   null for a sealed folder (so sibling-name uniqueness cannot be checked among sealed folders).
// - fil_sealed_mime: a sealed file's MIME type under its content key (`fil_files:{id}:mime`); fil_mime_type
//   is null for a sealed file, and the blobs of sealed files keep no MIME type.
// - fup_sealed_mime: a pending upload's MIME type into a sealed folder, sealed to the vault public key like
//   fup_sealed_name (`fup_file_uploads:{part name}:mime`) until completion; fup_mime_type null then.
// Existing sealed folders' names and sealed files' MIME types cannot be sealed here without the vault code
// (a higher floor): they are sealed by the next rename, or by the owner's next vault rotation, whose
// resealer seals any plaintext leftover (src/drive/sealed-files.ts).
export async function up(db: Kysely<any>): Promise<void> {
  await runStatements(db, [
    `alter table fol_folders add column fol_sealed_key text`,
    `alter table fol_folders add column fol_sealed_name text`,
    `alter table fol_folders alter column fol_name drop not null`,
    `alter table fil_files add column fil_sealed_mime text`,
    `alter table fup_file_uploads add column fup_sealed_mime text`,
  ]);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
