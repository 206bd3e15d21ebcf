import { businessError } from '../../http/errors.js';
import { defineAction } from '../define.js';
import { changePassword, newPasswordField } from './password.js';

export default defineAction({
  name: 'change_password_required',
  description: 'Set a new password when an administrator has required a change',
  mutates: true,
  input: {
    new_password: newPasswordField,
  },
  async run({ input, user: me, db, clock }) {
    const row = await db.selectFrom('usr_users').select('usr_force_password_change').where('usr_user_id', '=', me.usr_user_id).executeTakeFirstOrThrow();
    if (!row.usr_force_password_change) throw businessError('No password change is required for this account', { reason: 'not_required' });
    const revoked = await changePassword(db, me.usr_user_id, input.new_password, clock.now());
    return { data: { session_keys_revoked: revoked }, message: 'Your password has been changed.' };
  },
});
