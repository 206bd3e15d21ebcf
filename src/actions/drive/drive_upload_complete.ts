import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import { lockVault } from '../../accounts/vault/vaults.js';
import { createFileFromBlob, ingestBlob } from '../../drive/files.js';
import { partPath, plainLayout, removePart, sealedOutPath } from '../../drive/uploads/parts.js';
import { openSealedPart, openUploadKey, sealedLayout } from '../../drive/uploads/sealed-parts.js';
import { deleteUpload, findUpload, isUploadExpired, type PendingUpload } from '../../drive/uploads/pending.js';
import { checkQuota, placeContent } from '../../drive/uploads/place.js';
import { uploadPurpose } from '../../drive/uploads/purposes.js';
import { defineAction } from '../define.js';
import { resolveDestination, uploadRefusal } from './drive_upload_shared.js';
import { placeSealedUpload } from '../../drive/uploads/sealed-upload.js';
import { driveRefusal, fileOutput, readerOf, requireOwnerUnlocked, tierReader } from '../../drive/tree.js';

/** The server's own SHA-256 of the received plaintext (used when the last chunk's record of it is missing). */
async function hashOf(plaintext: Readable): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of plaintext) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** Refuses an upload whose bytes are not all there (`held`: plaintext bytes the part file holds). */
function checkAllHeld(upload: PendingUpload, held: number): void {
  const counts = { received_bytes: upload.receivedBytes, expected_bytes: upload.expectedBytes };
  if (upload.receivedBytes !== upload.expectedBytes) {
    throw uploadRefusal('size_mismatch', `Received ${upload.receivedBytes} of ${upload.expectedBytes} bytes; send the rest first`, counts);
  }
  if (upload.expectedBytes > 0 && held !== upload.expectedBytes) {
    throw uploadRefusal('size_mismatch', `Only ${held} of ${upload.expectedBytes} bytes are held; resume the upload`, { ...counts, received_bytes: held });
  }
}

/** Refuses an upload whose bytes are not the content it declared; else their SHA-256. */
async function verifiedSha256(upload: PendingUpload, plaintext: () => Readable): Promise<string> {
  const sha256 = upload.receivedSha256 ?? (await hashOf(plaintext()));
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
    const { input, user: me, db, clock } = ctx;
    // A file made in a sealed folder seals its key to the caller's vault: the vault row is held shared
    // (lockVault) before the upload row, in the order a rotation takes them, so the key it seals to is the
    // one current when this commits.
    const vault = await lockVault(db, me.usr_user_id, 'seal');
    const upload = await findUpload(db, input.upload_token.trim(), { forUpdate: true });
    if (!upload || upload.userId !== me.usr_user_id) throw uploadRefusal('not_found', 'No such upload');
    const now = clock.now();
    if (isUploadExpired(upload, now)) throw uploadRefusal('upload_expired', 'The upload has expired; start a new one');
    const purpose = uploadPurpose(upload.purpose, ctx.plugins);
    if (!purpose) throw uploadRefusal('not_found', `Uploads for ${upload.purpose} are no longer accepted`);
    const { blobs, uploadsDir, staging } = ctx.driveStorage;
    const file = partPath(uploadsDir, upload.partName);
    const sealedAtRest = upload.sealedKey;
    const layout = sealedAtRest === null ? plainLayout : sealedLayout;
    let held = await layout.held(file, upload.receivedBytes);
    // Chunks received by other nodes come from the shared staging.
    if (staging) held = await staging.restore(upload.partName, file, held, upload.receivedBytes, layout);
    checkAllHeld(upload, held.plain);
    const sizeBytes = upload.expectedBytes;
    // The received plaintext, as a stream: an upload into a sealed folder holds sealed records, which its
    // owner's open vault opens (decrypted in memory as they stream, never to disk).
    let plaintext: () => Readable = () => (sizeBytes === 0 ? Readable.from([]) : createReadStream(file));
    if (sealedAtRest !== null) {
      const owner = await requireOwnerUnlocked(ctx, upload.userId);
      const uploadKey = openUploadKey(owner.secretKey, upload.partName, sealedAtRest);
      if (!uploadKey) throw driveRefusal('vault_locked', 'The bytes of this upload were sealed under an earlier vault key; start the upload again');
      plaintext = () => openSealedPart(file, uploadKey, upload.partName, sizeBytes);
    }
    const sha256 = await verifiedSha256(upload, plaintext);
    const ingestPlain = () =>
      ingestBlob(db, blobs, { sha256, sizeBytes, mimeType: upload.mimeType, time: now }, () =>
        sizeBytes === 0 ? blobs.put(sha256, Readable.from([]), 0) : sealedAtRest !== null ? blobs.put(sha256, plaintext(), sizeBytes) : blobs.putFile(sha256, file, sizeBytes),
      );

    const dest = purpose.isDrive ? await resolveDestination(db, me.usr_user_id, { folderId: upload.folderId, fileId: upload.fileId }) : null;
    const open = dest?.sealed ? await requireOwnerUnlocked(ctx, dest.ownerUserId) : null;
    const limits = dest ? await checkQuota(db, tierReader(db, ctx.featureRegistry), dest, sizeBytes, { now, uploadId: upload.id }) : null;

    let data: Record<string, unknown>;
    let sealedFor: number[] | undefined;
    if (dest && limits && open) {
      if (!vault || vault.generation !== open.vault.generation) throw driveRefusal('vault_locked', 'Your vault key changed: unlock your vault and complete the upload again');
      const placed = await placeSealedUpload({ db, blobs, open, dest, limits, upload, plaintext, sealedOut: sealedOutPath(file), sizeBytes, now });
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
    await removePart(sealedOutPath(file)).catch(() => {});
    await staging?.remove(upload.partName).catch(() => {});
    return { data, message: 'Upload complete.', ...(sealedFor ? { sealedFor } : {}) };
  },
});
