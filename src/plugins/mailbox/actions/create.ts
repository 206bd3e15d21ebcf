import { defineAction } from '../../../actions/define.js';
import { businessError } from '../../../http/errors.js';
import { checkLevelAllowed, ensureFolders, mailboxByAddress, mailboxesOf } from '../mailboxes.js';
import { mailboxDb, SECURITY_LEVELS } from '../tables.js';

/**
 * Staff create a further mailbox for a member (CRUD POST stamps the caller as the owner, so a mailbox for
 * someone else is made here). Its level follows the same rule as CRUD: above standard needs the owner's vault.
 */
export default defineAction({
  name: 'mailbox/create',
  description: 'Staff: create a mailbox for a member (usr_user_id, mbx_address, optional mbx_security_level)',
  mutates: true,
  auth: { capability: 'write', min_user_permission: 5 },
  input: {
    usr_user_id: { type: 'int', min: 1, required: true },
    mbx_address: { type: 'email', required: true, max_length: 255 },
    mbx_security_level: { type: 'string', options: SECURITY_LEVELS },
  },
  async run({ db, input, clock }) {
    const owner = await db.selectFrom('usr_users').select('usr_user_id').where('usr_user_id', '=', input.usr_user_id).where('usr_delete_time', 'is', null).executeTakeFirst();
    if (!owner) throw businessError('That member does not exist', { reason: 'not_found' });
    const level = input.mbx_security_level ?? 'standard';
    const problem = await checkLevelAllowed(db, owner.usr_user_id, level);
    if (problem) throw businessError(`Cannot create the mailbox: ${problem}`, { reason: 'vault_required' });
    if (await mailboxByAddress(db, input.mbx_address)) throw businessError('That address is taken', { reason: 'address_taken' });
    const now = clock.now();
    const isDefault = (await mailboxesOf(db, owner.usr_user_id)).length === 0;
    const row = await mailboxDb(db)
      .insertInto('mbx_mailboxes')
      .values({ mbx_usr_user_id: owner.usr_user_id, mbx_address: input.mbx_address.trim(), mbx_security_level: level, mbx_is_default: isDefault, mbx_create_time: now, mbx_update_time: now })
      .returning('mbx_mailbox_id')
      .executeTakeFirstOrThrow();
    await ensureFolders(db, row.mbx_mailbox_id);
    return { data: { mailbox_id: row.mbx_mailbox_id, usr_user_id: owner.usr_user_id, address: input.mbx_address.trim(), security_level: level, is_default: isDefault }, message: 'Mailbox created.' };
  },
});
