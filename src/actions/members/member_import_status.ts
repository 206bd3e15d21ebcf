import { readImportJob } from '../../accounts/member-import/jobs.js';
import { businessError } from '../../http/errors.js';
import { actingUser } from '../account/user.js';
import { defineAction } from '../define.js';

/** A member import job's progress and, once it ended, its report (staff only). */
export default defineAction({
  name: 'member_import_status',
  description: 'Progress of a member import job (job_id): status, bytes read, rows by outcome, and its report once done (staff only)',
  mutates: false,
  auth: { min_user_permission: 5 },
  input: {
    job_id: { type: 'int', required: true, min: 1 },
  },
  async run({ input, user, db }) {
    actingUser(user);
    const job = await readImportJob(db, input.job_id);
    if (!job) throw businessError(`No member import job ${input.job_id}`, { reason: 'not_found' });
    const { user_id: _owner, ...view } = job;
    return { data: { job: view } };
  },
});
