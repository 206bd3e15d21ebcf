import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { unlink } from 'node:fs/promises';
import { Transform, type Readable, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Kysely } from 'kysely';
import { openSealedBox, sealToPublicKey } from '../accounts/vault/crypto.js';
import { registerContentResealer } from '../accounts/vault/rotation.js';
import { contentKeyOf, newContentKey, read, resealContentKey, sealField, type SealedReader, type SealedRecord } from '../accounts/vault/sealed.js';
import type { Vault } from '../accounts/vault/vaults.js';
import type { DB } from '../db/types.js';
import type { ByteRange } from './blobs/store.js';
import { openSealedBlob, SealStream, sealedSize, type BlobReader } from './sealed-blob.js';
import { resealUploadKey } from './uploads/sealed-parts.js';

// Sealed Drive files (DESIGN 10 "First consumer"): a file in a sealed folder has its own content key
// sealed to the owner's vault; its name is a sealed field and its bytes a sealed blob, both under that key
// and bound to the file's row. Only the owner, through an open vault window, opens either; everyone else
// (and the owner while locked) gets the name null and content_locked true, and the bytes answer 423.

export const SEALED_FILES_TABLE = 'fil_files';

/** A file row's sealed parts (null key: a plain file). */
export interface SealedFileRow {
  fil_file_id: number;
  fil_usr_user_id: number | null;
  fil_sealed_key: string | null;
  fil_sealed_name: string | null;
}

export function sealedRecordOf(row: SealedFileRow): SealedRecord | null {
  if (row.fil_sealed_key === null || row.fil_usr_user_id === null) return null;
  return { table: SEALED_FILES_TABLE, id: row.fil_file_id, ownerUserId: row.fil_usr_user_id, sealedKey: row.fil_sealed_key };
}

/** The associated data of a sealed file's bytes: every blob of the file (current and kept versions). */
export const sealedBytesAd = (fileId: number) => `${SEALED_FILES_TABLE}:${fileId}:content`;

/** The file's name as the reader may see it: null with content_locked true when they cannot open it. */
export async function openSealedName(row: SealedFileRow, reader: SealedReader | null): Promise<{ name: string | null; content_locked: boolean }> {
  const record = sealedRecordOf(row);
  if (!record) return { name: null, content_locked: false };
  if (!reader) return { name: null, content_locked: true };
  return read(record, { name: row.fil_sealed_name }, ['name'], reader);
}

/** The file's content key for this reader, or null (locked, not the owner, or not sealed). */
export async function fileContentKey(row: SealedFileRow, reader: SealedReader | null): Promise<Buffer | null> {
  const record = sealedRecordOf(row);
  return record && reader ? contentKeyOf(record, reader) : null;
}

/** Whether files placed in this folder are sealed (the root is not). */
export async function isSealedFolder(db: Kysely<DB>, folderId: number | null): Promise<boolean> {
  if (folderId === null) return false;
  const row = await db.selectFrom('fol_folders').select('fol_is_sealed').where('fol_folder_id', '=', folderId).executeTakeFirst();
  return row?.fol_is_sealed === true;
}

/** Seals a new file: a fresh content key for its row and its name under it. */
export function sealNewFile(vault: Vault, fileId: number, name: string): { contentKey: Buffer; sealedKey: string; sealedName: string } {
  const record = { table: SEALED_FILES_TABLE, id: fileId };
  const { contentKey, sealedKey } = newContentKey(vault, record);
  return { contentKey, sealedKey, sealedName: sealField(contentKey, record, 'name', name) };
}

export function sealFileName(contentKey: Buffer, fileId: number, name: string): string {
  return sealField(contentKey, { table: SEALED_FILES_TABLE, id: fileId }, 'name', name);
}

// A pending upload into a sealed folder keeps its name sealed to the vault until the file exists.
const uploadNameAd = (partName: string) => `fup_file_uploads:${partName}:name`;

export function sealUploadName(vault: Vault, partName: string, name: string): string {
  return sealToPublicKey(vault.publicKey, Buffer.from(name, 'utf8'), uploadNameAd(partName));
}

export function openUploadName(secretKey: Buffer, partName: string, sealed: string): string | null {
  return openSealedBox(secretKey, sealed, uploadNameAd(partName))?.toString('utf8') ?? null;
}

/** Hashes what passes (the stored bytes' SHA-256, the blob's content address). */
class Hasher extends Transform {
  readonly hash = createHash('sha256');
  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    this.hash.update(chunk);
    done(null, chunk);
  }
}

/**
 * Encrypts plaintext (`plainSize` bytes from `source`) into a sealed blob file at `out`, streaming; returns
 * its SHA-256 and size (what the blob store files it under). The caller removes `out` once it is stored.
 */
export async function sealFileBytes(source: Readable, plainSize: number, contentKey: Buffer, fileId: number, out: string): Promise<{ sha256: string; sizeBytes: number }> {
  const hasher = new Hasher();
  try {
    await pipeline(source, new SealStream(contentKey, sealedBytesAd(fileId)), hasher, createWriteStream(out, { flags: 'w' }));
  } catch (e) {
    await unlink(out).catch(() => {});
    throw e;
  }
  return { sha256: hasher.hash.digest('hex'), sizeBytes: sealedSize(plainSize) };
}

/** The plaintext of a sealed file's blob (or a byte range of it), decrypted as it streams. */
export function openSealedFileBytes(read: BlobReader, contentKey: Buffer, fileId: number, plainSize: number, range: ByteRange | null): Promise<Readable> {
  return openSealedBlob(read, contentKey, sealedBytesAd(fileId), plainSize, range);
}

let installed = false;
/**
 * Registers the Drive's re-sealing with vault rotation: every sealed file's content key and every pending
 * sealed upload name of the user moves to the new public key in the rotation's transaction. A key that
 * does not open under the old secret fails the rotation (re-run it) rather than leaving a file unreadable.
 */
export function installDriveResealer(): void {
  if (installed) return;
  installed = true;
  registerContentResealer(async (db, { userId, oldSecretKey, newPublicKey }) => {
    const files = await db
      .selectFrom('fil_files')
      .select(['fil_file_id', 'fil_sealed_key'])
      .where('fil_usr_user_id', '=', userId)
      .where('fil_sealed_key', 'is not', null)
      .where('fil_delete_time', 'is', null)
      .execute();
    for (const f of files) {
      const resealed = resealContentKey({ table: SEALED_FILES_TABLE, id: f.fil_file_id, sealedKey: f.fil_sealed_key! }, oldSecretKey, newPublicKey);
      if (!resealed) throw new Error(`sealed file ${f.fil_file_id} does not open with the vault's current key`);
      await db.updateTable('fil_files').set({ fil_sealed_key: resealed }).where('fil_file_id', '=', f.fil_file_id).execute();
    }
    const uploads = await db
      .selectFrom('fup_file_uploads')
      .select(['fup_file_upload_id', 'fup_part_name', 'fup_sealed_name', 'fup_sealed_key'])
      .where('fup_usr_user_id', '=', userId)
      .where((eb) => eb.or([eb('fup_sealed_name', 'is not', null), eb('fup_sealed_key', 'is not', null)]))
      .execute();
    for (const u of uploads) {
      const name = u.fup_sealed_name === null ? null : openUploadName(oldSecretKey, u.fup_part_name, u.fup_sealed_name);
      // The upload's own key, which opens the chunks it has received (sealed as they arrived).
      const key = u.fup_sealed_key === null ? null : resealUploadKey(oldSecretKey, newPublicKey, u.fup_part_name, u.fup_sealed_key);
      // A pending upload whose name or key no longer opens can only fail at completion: it goes now
      // (the purge task removes its part file and staged chunks as strays).
      if ((u.fup_sealed_name !== null && name === null) || (u.fup_sealed_key !== null && key === null)) {
        await db.deleteFrom('fup_file_uploads').where('fup_file_upload_id', '=', u.fup_file_upload_id).execute();
        continue;
      }
      const sealed = name === null ? null : sealToPublicKey(newPublicKey, Buffer.from(name, 'utf8'), uploadNameAd(u.fup_part_name));
      await db
        .updateTable('fup_file_uploads')
        .set({ fup_sealed_name: sealed, fup_sealed_key: key })
        .where('fup_file_upload_id', '=', u.fup_file_upload_id)
        .execute();
    }
  });
}
