import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import { createFileFromBlob, ingestBlob } from '../../drive/files.js';
import { partPath, partSize, removePart } from '../../drive/uploads/parts.js';
import { deleteUpload, findUpload, isUploadExpired, type PendingUpload } from '../../drive/uploads/pending.js';
import { checkQuota, placeContent } from '../../drive/uploads/place.js';
import { activePurposeOwners, uploadPurpose } from '../../drive/uploads/purposes.js';
import { activeDriveStorage } from '../../drive/storage.js';
import { actingUser } from '../account/user.js';
import { defineAction } from '../define.js';
import { resolveDestination, uploadRefusal } from './drive_upload_shared.js';
import { placeSealedUpload } from './sealed-upload.js';
import { fileOutput, readerOf, requireOwnerUnlocked, tierReader } from './tree.js';

/** The server's own SHA-256 of the part file (used only when the last chunk's record of it is missing). */
async function hashFile(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** Refuses an upload whose bytes are not all there or are not the content it declared. */
async function verifiedSha256(upload: PendingUpload, file: string): Promise<string> {
  const counts = { received_bytes: upload.receivedBytes, expected_bytes: upload.expectedBytes };
  if (upload.receivedBytes !== upload.expectedBytes) {
    throw uploadRefusal('size_mismatch', `Received ${upload.receivedBytes} of ${upload.expectedBytes} bytes; send the rest first`, counts);
  }
  if (upload.expectedBytes > 0) {
    const onDisk = await partSize(file);
    if (onDisk !== upload.expectedBytes) {
      throw uploadRefusal('size_mismatch', `Only ${onDisk} of ${upload.expectedBytes} bytes are held; resume the upload`, { ...counts, received_bytes: onDisk });
    }
  }
  const sha256 = upload.receivedSha256 ?? (await hashFile(file));
  if (upload.expectedSha256 !== null && upload.expectedSha256 !== sha256) {
    throw uploadRefusal('hash_mismatch', 'The bytes received do not have the sha256 given at init', { expected_sha256: upload.expectedSha256, received_sha256: sha256 });
  }
  return sha256;
}

/**
 * Completes an upload (DESIGN 9): verifies size and the server's own SHA-256, then for Drive checks the
 * per-file cap and the quota under the owner's lock, ingests the bytes through the one blob path (content
 * already stored is reused), makes the file or a new version (pruned to the owner's versioning depth),
 * records the change and deletes the pending upload. A refusal changes nothing and keeps the upload, so
 * the member can free space and complete again; retry-safe with Idempotency-Key.
 */
export default defineAction({
  name: 'drive_upload_complete',
  description: 'Finish a chunked upload (upload_token): the bytes are verified and become a Drive file, a new version, or the purpose\'s file',
  requires_setting: 'drive_active',
  mutates: true,
  input: {
    upload_token: { type: 'string', required: true, max_length: 64 },
  },
  async run(ctx) {
    const { input, user, db, clock } = ctx;
    const me = actingUser(user);
    const upload = await findUpload(db, input.upload_token.trim(), { forUpdate: true });
    if (!upload || upload.userId !== me.usr_user_id) throw uploadRefusal('not_found', 'No such upload');
    const now = clock.now();
    if (isUploadExpired(upload, now)) throw uploadRefusal('upload_expired', 'The upload has expired; start a new one');
    const purpose = uploadPurpose(upload.purpose, activePurposeOwners());
    if (!purpose) throw uploadRefusal('not_found', `Uploads for ${upload.purpose} are no longer accepted`);
    const { blobs, uploadsDir, staging } = activeDriveStorage();
    const file = partPath(uploadsDir, upload.partName);
    // Chunks received by other nodes come from the shared staging.
    if (staging) await staging.restore(upload.partName, file, await partSize(file), upload.receivedBytes);
    const sha256 = await verifiedSha256(upload, file);
    const sizeBytes = upload.expectedBytes;
    const ingestPlain = () =>
      ingestBlob(db, blobs, { sha256, sizeBytes, mimeType: upload.mimeType, time: now }, () =>
        sizeBytes === 0 ? blobs.put(sha256, Readable.from([]), 0) : blobs.putFile(sha256, file, sizeBytes),
      );

    const dest = purpose.isDrive ? await resolveDestination(db, me.usr_user_id, { folderId: upload.folderId, fileId: upload.fileId }) : null;
    const open = dest?.sealed ? await requireOwnerUnlocked(ctx, dest.ownerUserId) : null;
    const limits = dest ? await checkQuota(db, tierReader(db), dest, sizeBytes, { now, uploadId: upload.id }) : null;

    let data: Record<string, unknown>;
    let sealedFor: number[] | undefined;
    if (dest && limits && open) {
      const placed = await placeSealedUpload({ db, blobs, open, dest, limits, upload, partFile: file, sizeBytes, now });
      data = { file: await fileOutput(db, placed.fileId, false, readerOf(ctx)), new_version: dest.fileId !== null };
      sealedFor = [dest.ownerUserId];
    } else if (dest && limits) {
      const blobId = await ingestPlain();
      const name = upload.name ?? (await db.selectFrom('fil_files').select('fil_name').where('fil_file_id', '=', dest.fileId!).executeTakeFirstOrThrow()).fil_name ?? '';
      const placed = await placeContent(db, { dest, limits, name, mimeType: upload.mimeType, blobId, sizeBytes, now });
      data = { file: await fileOutput(db, placed.fileId, false, null), new_version: dest.fileId !== null };
    } else {
      const blobId = await ingestPlain();
      const name = upload.name ?? `${purpose.name}-${upload.id}`;
      const fileId = await createFileFromBlob(db, { ownerUserId: me.usr_user_id, source: purpose.name, name, folderId: null, blobId, sizeBytes, mimeType: upload.mimeType, time: now });
      data = { file: { id: fileId, name, size_bytes: sizeBytes, mime_type: upload.mimeType, source: purpose.name } };
    }
    await deleteUpload(db, upload.id);
    // Last: should the transaction still fail, the purge task removes the row and the file anyway.
    await removePart(file).catch(() => {});
    await staging?.remove(upload.partName).catch(() => {});
    return { data, message: 'Upload complete.', ...(sealedFor ? { sealedFor } : {}) };
  },
});
