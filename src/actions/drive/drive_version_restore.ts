import { recordChange } from '../../drive/changes.js';
import { addVersion, pruneVersions } from '../../drive/files.js';
import { driveLimits, driveUsageBytes } from '../../drive/quota.js';
import { defineAction } from '../define.js';
import { driveRefusal, fileOutput, lockOwner, notFound, tierReader, readerOf, sealedForOf } from '../../drive/tree.js';
import { versionsOf } from '../../drive/versions.js';

/**
 * Makes an earlier version the file's content again. The content it replaces becomes a version (so the
 * restore can itself be undone); the restored version stays in the history too, and the history is then
 * pruned to the owner's drive_versioning_depth. Quota bills the owner: a restore that would leave them
 * over their storage, with more than before, is refused (quota_exceeded).
 */
export default defineAction({
  name: 'drive_version_restore',
  description: 'Restore an earlier version (version_id) of a Drive file (file_id); the current content becomes a version',
  requires_setting: 'drive_active',
  mutates: true,
  input: {
    file_id: { type: 'int', required: true, min: 1 },
    version_id: { type: 'int', required: true, min: 1 },
  },
  drive_item: { need: 'edit', of: 'file' },
  async run(ctx) {
    const { input, db, clock, item } = ctx;
    const version = await db
      .selectFrom('fvr_file_versions')
      .select(['fvr_fbb_file_blob_id', 'fvr_size_bytes', 'fvr_mime_type'])
      .where('fvr_file_version_id', '=', input.version_id)
      .where('fvr_fil_file_id', '=', item.id)
      .executeTakeFirst();
    if (!version) throw notFound('version');
    await lockOwner(db, item.ownerUserId);
    const owner = await driveLimits(tierReader(db, ctx.featureRegistry), item.ownerUserId);
    const before = await driveUsageBytes(db, item.ownerUserId);
    const now = clock.now();
    await addVersion(db, { fileId: item.id, blobId: version.fvr_fbb_file_blob_id, sizeBytes: version.fvr_size_bytes, mimeType: item.sealed ? null : version.fvr_mime_type, time: now });
    await pruneVersions(db, item.id, owner.versioningDepth);
    const after = await driveUsageBytes(db, item.ownerUserId);
    if (after > before && after > owner.storageBytes) {
      throw driveRefusal('quota_exceeded', 'Restoring this version would take more storage than your plan has', { usage_bytes: before, storage_bytes: owner.storageBytes });
    }
    await recordChange(db, { ownerUserId: item.ownerUserId, fileId: item.id, kind: 'version', time: now });
    const file = await fileOutput(db, item.id, item.inTrash, readerOf(ctx));
    return { data: { file, versions: await versionsOf(db, item.id, file.sealed === true) }, ...sealedForOf({ file }), message: 'The earlier version is restored.' };
  },
});
