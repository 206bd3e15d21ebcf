import { unlink } from 'node:fs/promises';
import { Readable } from 'node:stream';
import type { Kysely } from 'kysely';
import type { OpenVault } from '../../accounts/vault/window.js';
import type { DB } from '../../db/types.js';
import { recordChange } from '../changes.js';
import { acquireBlob, DRIVE_SOURCE, ingestBlob } from '../files.js';
import { openContentKey } from '../../accounts/vault/sealed.js';
import { openUploadMime, openUploadName, SEALED_FILES_TABLE, sealFileBytes, sealFileMime, sealNewFile } from '../sealed-files.js';
import type { BlobStore } from '../blobs/store.js';
import type { PendingUpload } from './pending.js';
import { placeContent, type UploadDestination } from './place.js';
import type { DriveLimits } from '../quota.js';
import { driveRefusal } from '../tree.js';

// Completing an upload into a sealed folder (DESIGN 10): the file's row comes first (its id binds its
// content key, name and bytes), then the received bytes are encrypted as they stream into a sealed blob
// file, which the blob store files under the ciphertext's own SHA-256 (so it never deduplicates with
// anything). A new version of a sealed file is encrypted under that file's existing content key.

interface SealedPlacement {
  db: Kysely<DB>;
  blobs: BlobStore;
  open: OpenVault;
  dest: UploadDestination;
  limits: DriveLimits;
  upload: PendingUpload;
  /** The received plaintext, streamed (from the part file, or decrypted from its sealed records). */
  plaintext: () => Readable;
  /** Where the file's sealed bytes are written before the blob store takes them (removed after). */
  sealedOut: string;
  sizeBytes: number;
  now: Date;
}

async function storeSealedBytes(p: SealedPlacement, contentKey: Buffer, fileId: number): Promise<number> {
  const out = p.sealedOut;
  const source = p.sizeBytes === 0 ? Readable.from([]) : p.plaintext();
  try {
    const sealed = await sealFileBytes(source, p.sizeBytes, contentKey, fileId, out);
    return await ingestBlob(p.db, p.blobs, { sha256: sealed.sha256, sizeBytes: sealed.sizeBytes, mimeType: null, time: p.now }, () =>
      p.blobs.putFile(sealed.sha256, out, sealed.sizeBytes),
    );
  } finally {
    await unlink(out).catch(() => {});
  }
}

/** Places a completed upload's bytes in a sealed folder (a new file) or as a sealed file's new version. */
export async function placeSealedUpload(p: SealedPlacement): Promise<{ fileId: number }> {
  const { db, dest, now } = p;
  // The MIME type waited sealed to the vault (uploads opened before that kept it in clear).
  const mimeType = p.upload.sealedMime !== null ? openUploadMime(p.open.secretKey, p.upload.partName, p.upload.sealedMime) : p.upload.mimeType;
  if (p.upload.sealedMime !== null && mimeType === null) throw driveRefusal('vault_locked', 'The type of this upload was sealed under an earlier vault key; start the upload again');
  const upload = { ...p.upload, mimeType };
  if (dest.fileId !== null) {
    const row = await db.selectFrom('fil_files').select('fil_sealed_key').where('fil_file_id', '=', dest.fileId).executeTakeFirstOrThrow();
    const contentKey = row.fil_sealed_key === null ? null : openContentKey({ table: SEALED_FILES_TABLE, id: dest.fileId, sealedKey: row.fil_sealed_key }, p.open.secretKey);
    if (!contentKey) throw driveRefusal('vault_locked', 'This sealed file does not open with your vault now; unlock it and complete the upload again');
    const blobId = await storeSealedBytes(p, contentKey, dest.fileId);
    // The MIME type is sealed under the file's key, never kept in clear (issue 35).
    await placeContent(db, { dest, limits: p.limits, name: '', mimeType: null, blobId, sizeBytes: p.sizeBytes, now });
    await db.updateTable('fil_files').set({ fil_sealed_mime: sealFileMime(contentKey, dest.fileId, upload.mimeType) }).where('fil_file_id', '=', dest.fileId).execute();
    return { fileId: dest.fileId };
  }
  const name = upload.sealedName !== null ? openUploadName(p.open.secretKey, upload.partName, upload.sealedName) : upload.name;
  if (name === null) throw driveRefusal('vault_locked', 'The name of this upload was sealed under an earlier vault key; start the upload again');
  const row = await db
    .insertInto('fil_files')
    .values({
      fil_usr_user_id: dest.ownerUserId,
      fil_source: DRIVE_SOURCE,
      fil_name: null,
      fil_fol_folder_id: dest.folderId,
      fil_size_bytes: p.sizeBytes,
      fil_mime_type: null,
      fil_create_time: now,
      fil_update_time: now,
    })
    .returning('fil_file_id')
    .executeTakeFirstOrThrow();
  const fileId = row.fil_file_id;
  const sealed = sealNewFile(p.open.vault, fileId, name);
  const blobId = await storeSealedBytes(p, sealed.contentKey, fileId);
  if (!(await acquireBlob(db, blobId))) throw new Error(`blob ${blobId} is gone`);
  await db
    .updateTable('fil_files')
    .set({ fil_fbb_file_blob_id: blobId, fil_sealed_key: sealed.sealedKey, fil_sealed_name: sealed.sealedName, fil_sealed_mime: sealFileMime(sealed.contentKey, fileId, upload.mimeType) })
    .where('fil_file_id', '=', fileId)
    .execute();
  await recordChange(db, { ownerUserId: dest.ownerUserId, fileId, kind: 'create', time: now });
  return { fileId };
}
