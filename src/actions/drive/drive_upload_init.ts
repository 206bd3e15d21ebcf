import type { Kysely } from 'kysely';
import { lockVault } from '../../accounts/vault/vaults.js';
import type { DB } from '../../db/types.js';
import { createUpload } from '../../drive/uploads/pending.js';
import { checkQuota, ownedBlobWith, placeContent } from '../../drive/uploads/place.js';
import { availablePurposes, purposeHeldBytes, UPLOAD_PURPOSE_NAMES, uploadPurpose } from '../../drive/uploads/purposes.js';
import { lockOwnerQuota } from '../../drive/quota.js';
import { sealUploadMime, sealUploadName } from '../../drive/sealed-files.js';
import { newUploadKeys } from '../../drive/uploads/sealed-parts.js';
import { authError, businessError, validationError } from '../../http/errors.js';
import { formatTimestamp } from '../../lib/time.js';
import { defineAction } from '../define.js';
import { checkMimeType, checkSha256, resolveDestination } from './drive_upload_shared.js';
import { checkName, driveRefusal, fileOutput, requireOwnerUnlocked, tierReader } from '../../drive/tree.js';

async function blobMimeType(db: Kysely<DB>, blobId: number): Promise<string | null> {
  const row = await db.selectFrom('fbb_file_blobs').select('fbb_mime_type').where('fbb_file_blob_id', '=', blobId).executeTakeFirstOrThrow();
  return row.fbb_mime_type;
}

/**
 * Opens a chunked upload (DESIGN 9). For Drive: the destination and the owner's plan are checked now
 * (fail fast; completion checks again under the owner's lock), and when the caller already possesses
 * content with that sha256 and size the file is made at once ({deduped: true, file}) and no bytes are
 * sent. The purpose is fixed here; non-Drive purposes skip quota, folders and dedup.
 */
export default defineAction({
  name: 'drive_upload_init',
  description:
    'Start a chunked upload: name, size_bytes, optional sha256, mime_type, folder_id (new file) or file_id (new version), purpose (drive, mail_import_archive, or member_import for staff); returns upload_token and chunk_bytes, or {deduped, file} when you already have that content',
  requires_setting: 'drive_active',
  mutates: true,
  // The upload token is a bearer secret stored only hashed: an Idempotency-Key keeps a marker, never it.
  answer_holds_secret: true,
  input: {
    name: { type: 'string', max_length: 255 },
    size_bytes: { type: 'int', required: true, min: 0 },
    sha256: { type: 'string', max_length: 64 },
    mime_type: { type: 'string', max_length: 255 },
    folder_id: { type: 'int', min: 1 },
    file_id: { type: 'int', min: 1 },
    purpose: { type: 'string', options: UPLOAD_PURPOSE_NAMES },
  },
  async run(ctx) {
    const { input, user: me, db, clock, settings } = ctx;
    const owners = ctx.plugins;
    const purpose = uploadPurpose(input.purpose ?? 'drive', owners);
    // A purpose whose owner (plugin) is off does not exist: the same refusal as an unknown one.
    if (!purpose) throw validationError({ purpose: `must be one of ${availablePurposes(owners).map((p) => p.name).join(', ')}` });
    if (me.usr_permission < purpose.minUserPermission) throw authError(403, `Uploads for ${purpose.name} are for staff only`);
    const sizeBytes = input.size_bytes;
    const sha256 = checkSha256(input.sha256);
    const mimeType = checkMimeType(input.mime_type);
    const folderId = input.folder_id ?? null;
    const fileId = input.file_id ?? null;
    const now = clock.now();
    const chunkBytes = settings.int('drive_upload_chunk_bytes');
    let name: string | null = input.name === undefined || input.name === null || input.name.trim() === '' ? null : checkName(input.name);
    let sealName: ((partName: string) => string) | undefined;
    let sealMime: ((partName: string) => string) | undefined;
    let sealKeys: ((partName: string) => { publicKey: string; sealedKey: string }) | undefined;

    if (!purpose.isDrive) {
      if (folderId !== null || fileId !== null) throw validationError({ [folderId !== null ? 'folder_id' : 'file_id']: `is not used by the ${purpose.name} purpose` });
      const max = purpose.maxBytes(settings);
      if (sizeBytes > max) throw businessError(`An upload for ${purpose.name} is at most ${max} bytes`, { reason: 'file_too_large', size_bytes: sizeBytes, max_file_bytes: max });
      // The purpose's own limit holds everything the member keeps for it; the row opened below reserves
      // this upload's size, under the member's quota lock until this transaction commits.
      await lockOwnerQuota(db, me.usr_user_id);
      const held = await purposeHeldBytes(db, me.usr_user_id, purpose.name, { now });
      if (held + sizeBytes > max) {
        throw businessError(`Your ${purpose.name} uploads may hold at most ${max} bytes together; ${held} are held`, {
          reason: 'quota_exceeded',
          size_bytes: sizeBytes,
          storage_bytes: max,
          used_bytes: held,
        });
      }
    } else {
      if (folderId !== null && fileId !== null) throw validationError({ folder_id: 'give folder_id for a new file or file_id for a new version, not both' });
      if (name === null && fileId === null) throw validationError({ name: 'is required' });
      const dest = await resolveDestination(db, me.usr_user_id, { folderId, fileId });
      const reader = tierReader(db, ctx.featureRegistry);
      if (dest.sealed) {
        // Sealed content is written only by its owner with the vault open, refused before any byte is sent;
        // it is never deduplicated (its blob is its own ciphertext) and its name waits sealed.
        await requireOwnerUnlocked(ctx, dest.ownerUserId);
        // Sealed to the key current when the upload row commits (a rotation waits for it, then re-seals it).
        const vault = await lockVault(db, dest.ownerUserId, 'seal');
        if (!vault) throw driveRefusal('vault_locked', 'Set up and unlock your vault first');
        // Its bytes are sealed as each chunk arrives, to a keypair of the upload's own (sealed-parts.ts).
        sealKeys = (partName) => newUploadKeys(vault.publicKey, partName);
        if (name !== null) {
          const plainName = name;
          sealName = (partName) => sealUploadName(vault, partName, plainName);
        }
        // Its MIME type waits sealed too (issue 35).
        if (mimeType !== null) {
          const plainMime = mimeType;
          sealMime = (partName) => sealUploadMime(vault, partName, plainMime);
        }
      }
      const owned = sha256 === null || dest.sealed ? null : await ownedBlobWith(db, me.usr_user_id, { sha256, sizeBytes, driver: ctx.driveStorage.blobs.driver });
      // Under the owner's quota lock until this transaction commits: the dedup short-circuit places the
      // file now, and an upload's row reserves its expected size (so two inits cannot share the last bytes).
      const limits = await checkQuota(db, reader, dest, sizeBytes, { now });
      if (owned !== null) {
        if (name === null) name = (await db.selectFrom('fil_files').select('fil_name').where('fil_file_id', '=', fileId!).executeTakeFirstOrThrow()).fil_name ?? '';
        const placed = await placeContent(db, { dest, limits, name, mimeType: mimeType ?? (await blobMimeType(db, owned)), blobId: owned, sizeBytes, now });
        return { data: { deduped: true, file: await fileOutput(db, placed.fileId, false, null) }, message: 'You already have this content: the file was made without uploading it.' };
      }
    }

    const opened = await createUpload(db, { purpose: purpose.name, userId: me.usr_user_id, name, mimeType, folderId, fileId, expectedBytes: sizeBytes, expectedSha256: sha256, now, ...(sealName ? { sealName } : {}), ...(sealMime ? { sealMime } : {}), ...(sealKeys ? { sealKeys } : {}) });
    return {
      data: { upload_token: opened.token, chunk_bytes: chunkBytes, expires_time: formatTimestamp(opened.expiresTime), purpose: purpose.name },
      message: 'Upload started: send the bytes in chunks, then complete it.',
    };
  },
});
