import { importMembers } from '../../accounts/member-import/import.js';
import { TierMembershipService } from '../../tiers/membership.js';
import { openPurposeFile } from '../../drive/uploads/purpose-files.js';
import { actingUser } from '../account/user.js';
import { defineAction } from '../define.js';
import { notCsvRefusal, requireImportFile } from './import-shared.js';

const DEFAULT_LIMIT = 200;

/**
 * What importing an uploaded member CSV would do (DESIGN 16), row by row, without changing anything:
 * create, update (naming what changes), unchanged, or error with the reason. The file is read as a
 * stream; the counts cover every row, the listed rows the first `limit`, the errors every skipped row
 * (the first thousand).
 */
export default defineAction({
  name: 'member_import_preview',
  description: 'Preview a member CSV uploaded with purpose member_import (upload: its file id): per row create, update, unchanged or error with the reason (staff only)',
  mutates: false,
  auth: { min_user_permission: 5 },
  input: {
    upload: { type: 'int', required: true, min: 1 },
    limit: { type: 'int', min: 0, max: 5000 },
  },
  async run({ input, user, db, clock, driveStorage }) {
    const me = actingUser(user);
    const file = await requireImportFile(db, input.upload, me.usr_user_id);
    const stream = await openPurposeFile(driveStorage.blobs, file);
    try {
      const summary = await importMembers(
        { db, clock, membership: new TierMembershipService(db, clock), linker: null, actor: { usr_user_id: me.usr_user_id, usr_permission: me.usr_permission } },
        stream,
        { dryRun: true, listRows: input.limit ?? DEFAULT_LIMIT },
      );
      const { listed, ...rest } = summary;
      return { data: { upload: file.fileId, ...rest, rows_listed: listed }, message: `${summary.rows} rows: ${summary.counts.create} to create, ${summary.counts.update} to update, ${summary.counts.unchanged} unchanged, ${summary.counts.error} with errors.` };
    } catch (e) {
      throw notCsvRefusal(e) ?? e;
    } finally {
      stream.destroy();
    }
  },
});
