import { createImportJob, readImportJob } from '../../accounts/member-import/jobs.js';
import { checkMemberCsv } from '../../accounts/member-import/import.js';
import { openPurposeFile } from '../../drive/uploads/purpose-files.js';
import { validationError } from '../../http/errors.js';
import { actingUser } from '../account/user.js';
import { defineAction } from '../define.js';
import { notCsvRefusal, requireImportFile } from './import-shared.js';

/**
 * Starts importing an uploaded member CSV (DESIGN 16). The whole file is read once here as a CSV (a file
 * that is not one is refused, and nothing starts); the import itself runs in the background in batches,
 * each batch a transaction, and reports its progress on the job (member_import_status, the admin page's
 * progress bar). options.dry_run: the job only reports what it would do.
 */
export default defineAction({
  name: 'member_import_run',
  description: 'Import a member CSV uploaded with purpose member_import (upload: its file id; options: {dry_run}); returns the job to follow with member_import_status (staff only)',
  mutates: true,
  auth: { min_user_permission: 5 },
  input: {
    upload: { type: 'int', required: true, min: 1 },
    options: { type: 'object' },
  },
  async run({ input, user, db, clock, driveStorage }) {
    const me = actingUser(user);
    const options = input.options ?? {};
    const dryRun = options.dry_run ?? false;
    if (typeof dryRun !== 'boolean') throw validationError({ options: 'dry_run must be true or false' });
    const file = await requireImportFile(db, input.upload, me.usr_user_id);
    const stream = await openPurposeFile(driveStorage.blobs, file);
    let rows: number;
    try {
      rows = (await checkMemberCsv(stream)).rows;
    } catch (e) {
      throw notCsvRefusal(e) ?? e;
    } finally {
      stream.destroy();
    }
    const jobId = await createImportJob(db, { fileId: file.fileId, userId: me.usr_user_id, bytesTotal: file.sizeBytes, dryRun, now: clock.now() });
    const { user_id: _owner, ...job } = (await readImportJob(db, jobId))!;
    return { data: { job: { ...job, rows_in_file: rows } }, message: `Import of ${rows} rows queued.` };
  },
});
