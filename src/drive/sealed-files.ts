import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { unlink } from 'node:fs/promises';
import { Transform, type Readable, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Kysely } from 'kysely';
import { openSealedBox, sealToPublicKey } from '../accounts/vault/crypto.js';
import type { ContentResealer } from '../accounts/vault/rotation.js';
import { contentKeyOf, newContentKey, openContentKey, read, resealContentKey, sealField, type SealedReader, type SealedRecord } from '../accounts/vault/sealed.js';
import { lockVault, type Vault } from '../accounts/vault/vaults.js';
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
  fil_sealed_mime?: string | null;
}

export function sealedRecordOf(row: SealedFileRow): SealedRecord | null {
  if (row.fil_sealed_key === null || row.fil_usr_user_id === null) return null;
  return { table: SEALED_FILES_TABLE, id: row.fil_file_id, ownerUserId: row.fil_usr_user_id, sealedKey: row.fil_sealed_key };
}

/** The associated data of a sealed file's bytes: every blob of the file (current and kept versions). */
export const sealedBytesAd = (fileId: number) => `${SEALED_FILES_TABLE}:${fileId}:content`;

/**
 * The file's name and MIME type as the reader may see them: both null with content_locked true when they
 * cannot open them. `plainMime` is a MIME type stored in clear before it was sealed (issue 35: sealed by
 * the next rotation), shown only to a reader who opens the file.
 */
export async function openSealedName(
  row: SealedFileRow,
  reader: SealedReader | null,
  plainMime: string | null = null,
): Promise<{ name: string | null; mime_type: string | null; content_locked: boolean }> {
  const record = sealedRecordOf(row);
  if (!record) return { name: null, mime_type: null, content_locked: false };
  if (!reader) return { name: null, mime_type: null, content_locked: true };
  const opened = await read(record, { name: row.fil_sealed_name, mime: row.fil_sealed_mime ?? null }, ['name', 'mime'], reader);
  return { name: opened.name, mime_type: opened.content_locked ? null : (opened.mime ?? plainMime), content_locked: opened.content_locked };
}

export function sealFileMime(contentKey: Buffer, fileId: number, mime: string | null): string | null {
  return mime === null ? null : sealField(contentKey, { table: SEALED_FILES_TABLE, id: fileId }, 'mime', mime);
}

// Sealed folders (issue 35): a sealed folder's own name is sealed like a file's, under a content key of the
// folder's own. Sealing needs only the vault's public key, so a folder is named (made, renamed) while the
// vault is locked too; opening its name needs the owner's open window.
export const SEALED_FOLDERS_TABLE = 'fol_folders';

/** A folder row's sealed parts. */
export interface SealedFolderRow {
  fol_folder_id: number;
  fol_usr_user_id: number;
  fol_name: string | null;
  fol_is_sealed: boolean;
  fol_sealed_key: string | null;
  fol_sealed_name: string | null;
}

/** A sealed folder's name sealed under a fresh content key (each naming takes a new key). */
export function sealFolderName(vault: Pick<Vault, 'publicKey'>, folderId: number, name: string): { fol_sealed_key: string; fol_sealed_name: string } {
  const record = { table: SEALED_FOLDERS_TABLE, id: folderId };
  const { contentKey, sealedKey } = newContentKey(vault, record);
  return { fol_sealed_key: sealedKey, fol_sealed_name: sealField(contentKey, record, 'name', name) };
}

/**
 * The folder's name as the reader may see it. A plain folder's name as it is; a sealed folder's only when
 * the reader's window opens it (else null with content_locked true). A sealed folder still named in clear
 * (made before names were sealed, until the next rename or rotation seals it) shows that name only to a
 * reader who could open it: its owner with the vault open.
 */
export async function openFolderName(row: SealedFolderRow, reader: SealedReader | null): Promise<{ name: string | null; content_locked?: boolean }> {
  if (!row.fol_is_sealed) return { name: row.fol_name ?? '' };
  if (!reader) return { name: null, content_locked: true };
  if (row.fol_sealed_key === null) {
    const open = reader.window && reader.userId === row.fol_usr_user_id ? await reader.window.unsealFor(reader.db, row.fol_usr_user_id) : null;
    return open ? { name: row.fol_name ?? '', content_locked: false } : { name: null, content_locked: true };
  }
  const record = { table: SEALED_FOLDERS_TABLE, id: row.fol_folder_id, ownerUserId: row.fol_usr_user_id, sealedKey: row.fol_sealed_key };
  return read(record, { name: row.fol_sealed_name }, ['name'], reader);
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

// Its MIME type likewise (issue 35).
const uploadMimeAd = (partName: string) => `fup_file_uploads:${partName}:mime`;

export function sealUploadMime(vault: Pick<Vault, 'publicKey'>, partName: string, mime: string): string {
  return sealToPublicKey(vault.publicKey, Buffer.from(mime, 'utf8'), uploadMimeAd(partName));
}

export function openUploadMime(secretKey: Buffer, partName: string, sealed: string): string | null {
  return openSealedBox(secretKey, sealed, uploadMimeAd(partName))?.toString('utf8') ?? null;
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

/**
 * Moves every sealed folder's name key to the new public key; a sealed folder still named in clear (made
 * before folder names were sealed) is sealed now, under a fresh key sealed to the new public key.
 */
async function resealFolders(db: Kysely<DB>, userId: number, oldSecretKey: Buffer, newPublicKey: Buffer): Promise<void> {
  const folders = await db
    .selectFrom('fol_folders')
    .select(['fol_folder_id', 'fol_name', 'fol_sealed_key'])
    .where('fol_usr_user_id', '=', userId)
    .where('fol_is_sealed', '=', true)
    .where('fol_delete_time', 'is', null)
    .execute();
  for (const f of folders) {
    if (f.fol_sealed_key === null) {
      if (f.fol_name === null) continue;
      const sealed = sealFolderName({ publicKey: newPublicKey }, f.fol_folder_id, f.fol_name);
      await db.updateTable('fol_folders').set({ ...sealed, fol_name: null }).where('fol_folder_id', '=', f.fol_folder_id).execute();
      continue;
    }
    const resealed = resealContentKey({ table: SEALED_FOLDERS_TABLE, id: f.fol_folder_id, sealedKey: f.fol_sealed_key }, oldSecretKey, newPublicKey);
    // Sealed to a key that no longer exists (lost before rotations were serialised): nothing can open it,
    // so it stays as it is; failing here would keep the owner from ever rotating again.
    if (!resealed) continue;
    await db.updateTable('fol_folders').set({ fol_sealed_key: resealed }).where('fol_folder_id', '=', f.fol_folder_id).execute();
  }
}

/**
 * Seals the names of sealed folders still stored in clear (made before folder names were sealed, migration
 * 0032) to their owner's current vault key, each under the vault lock (a rotation waits, then re-seals it).
 * Needs only the public key, so it runs without anyone's vault open. Returns how many it sealed.
 */
export async function sealLeftoverFolderNames(db: Kysely<DB>, limit = 1000): Promise<number> {
  const leftovers = await db
    .selectFrom('fol_folders')
    .select(['fol_folder_id', 'fol_usr_user_id'])
    .where('fol_is_sealed', '=', true)
    .where('fol_sealed_key', 'is', null)
    .where('fol_name', 'is not', null)
    .where('fol_delete_time', 'is', null)
    .orderBy('fol_folder_id')
    .limit(limit)
    .execute();
  let sealed = 0;
  for (const f of leftovers) {
    sealed += await db.transaction().execute(async (trx) => {
      const vault = await lockVault(trx, f.fol_usr_user_id, 'seal');
      if (!vault) return 0;
      // Read again under the lock: a rename or a rotation may have sealed it meanwhile.
      const row = await trx
        .selectFrom('fol_folders')
        .select('fol_name')
        .where('fol_folder_id', '=', f.fol_folder_id)
        .where('fol_sealed_key', 'is', null)
        .forUpdate()
        .executeTakeFirst();
      if (!row || row.fol_name === null) return 0;
      await trx.updateTable('fol_folders').set({ ...sealFolderName(vault, f.fol_folder_id, row.fol_name), fol_name: null }).where('fol_folder_id', '=', f.fol_folder_id).execute();
      return 1;
    });
  }
  return sealed;
}

/**
 * The Drive's re-sealing in a vault rotation (the roof lists it first among the rotation's re-sealers):
 * every sealed file's content key and every pending sealed upload name of the user moves to the new
 * public key in the rotation's transaction. Every sealing
 * writer holds the vault row while it seals (lockVault), so each key opens under the old secret; one that
 * does not was sealed to a key already thrown away and is left as it is instead of failing every rotation.
 */
export const resealDriveContent: ContentResealer = async (db, { userId, oldSecretKey, newPublicKey }) => {
  const files = await db
    .selectFrom('fil_files')
    .select(['fil_file_id', 'fil_sealed_key', 'fil_mime_type'])
    .where('fil_usr_user_id', '=', userId)
    .where('fil_sealed_key', 'is not', null)
    .where('fil_delete_time', 'is', null)
    .execute();
  // Sealed blobs are each file's own ciphertext: a MIME type kept on one from before is dropped.
  const blobIds = [
    ...(await db.selectFrom('fil_files').select('fil_fbb_file_blob_id as id').where('fil_usr_user_id', '=', userId).where('fil_sealed_key', 'is not', null).where('fil_fbb_file_blob_id', 'is not', null).execute()),
    ...(await db.selectFrom('fvr_file_versions').innerJoin('fil_files', 'fil_file_id', 'fvr_fil_file_id').select('fvr_fbb_file_blob_id as id').where('fil_usr_user_id', '=', userId).where('fil_sealed_key', 'is not', null).execute()),
  ].flatMap((r) => (r.id === null ? [] : [r.id]));
  const sealedFileIds = files.map((f) => f.fil_file_id);
  if (sealedFileIds.length > 0) {
    await db.updateTable('fvr_file_versions').set({ fvr_mime_type: null }).where('fvr_fil_file_id', 'in', sealedFileIds).where('fvr_mime_type', 'is not', null).execute();
  }
  if (blobIds.length > 0) await db.updateTable('fbb_file_blobs').set({ fbb_mime_type: null }).where('fbb_file_blob_id', 'in', blobIds).where('fbb_mime_type', 'is not', null).execute();
  for (const f of files) {
    const resealed = resealContentKey({ table: SEALED_FILES_TABLE, id: f.fil_file_id, sealedKey: f.fil_sealed_key! }, oldSecretKey, newPublicKey);
    // As for folders: a key sealed to a key that no longer exists is already lost; it stays as it is.
    if (!resealed) continue;
    // A MIME type stored in clear before MIME types were sealed is sealed now (the content key is the same).
    const leftoverMime =
      f.fil_mime_type === null
        ? {}
        : {
            fil_sealed_mime: sealFileMime(openContentKey({ table: SEALED_FILES_TABLE, id: f.fil_file_id, sealedKey: f.fil_sealed_key! }, oldSecretKey)!, f.fil_file_id, f.fil_mime_type),
            fil_mime_type: null,
          };
    await db.updateTable('fil_files').set({ fil_sealed_key: resealed, ...leftoverMime }).where('fil_file_id', '=', f.fil_file_id).execute();
  }
  await resealFolders(db, userId, oldSecretKey, newPublicKey);
  const uploads = await db
    .selectFrom('fup_file_uploads')
    .select(['fup_file_upload_id', 'fup_part_name', 'fup_sealed_name', 'fup_sealed_mime', 'fup_sealed_key'])
    .where('fup_usr_user_id', '=', userId)
    .where((eb) => eb.or([eb('fup_sealed_name', 'is not', null), eb('fup_sealed_mime', 'is not', null), eb('fup_sealed_key', 'is not', null)]))
    .execute();
  for (const u of uploads) {
    const name = u.fup_sealed_name === null ? null : openUploadName(oldSecretKey, u.fup_part_name, u.fup_sealed_name);
    const mime = u.fup_sealed_mime === null ? null : openUploadMime(oldSecretKey, u.fup_part_name, u.fup_sealed_mime);
    // The upload's own key, which opens the chunks it has received (sealed as they arrived).
    const key = u.fup_sealed_key === null ? null : resealUploadKey(oldSecretKey, newPublicKey, u.fup_part_name, u.fup_sealed_key);
    // A pending upload whose name or key no longer opens can only fail at completion: it goes now
    // (the purge task removes its part file and staged chunks as strays).
    if ((u.fup_sealed_name !== null && name === null) || (u.fup_sealed_mime !== null && mime === null) || (u.fup_sealed_key !== null && key === null)) {
      await db.deleteFrom('fup_file_uploads').where('fup_file_upload_id', '=', u.fup_file_upload_id).execute();
      continue;
    }
    const sealed = name === null ? null : sealToPublicKey(newPublicKey, Buffer.from(name, 'utf8'), uploadNameAd(u.fup_part_name));
    await db
      .updateTable('fup_file_uploads')
      .set({ fup_sealed_name: sealed, fup_sealed_mime: mime === null ? null : sealUploadMime({ publicKey: newPublicKey }, u.fup_part_name, mime), fup_sealed_key: key })
      .where('fup_file_upload_id', '=', u.fup_file_upload_id)
      .execute();
  }
};
