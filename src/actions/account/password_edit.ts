import { verifySecret } from '../../accounts/passwords.js';
import { validationError } from '../../http/errors.js';
import { defineAction } from '../define.js';
import { changePassword, newPasswordField } from './password.js';

export default defineAction({
  name: 'password_edit',
  description: 'Change the password of the signed-in user',
  mutates: true,
  input: {
    current_password: { type: 'password', required: true, max_length: 255 },
    new_password: newPasswordField,
  },
  async run({ input, user: me, db, clock, recordFailedAuth }) {
    const row = await db.selectFrom('usr_users').select('usr_password').where('usr_user_id', '=', me.usr_user_id).executeTakeFirstOrThrow();
    if (!row.usr_password || !(await verifySecret(row.usr_password, input.current_password))) {
      await recordFailedAuth();
      throw validationError({ current_password: 'is incorrect' });
    }
    const revoked = await changePassword(db, me.usr_user_id, input.new_password, clock.now());
    return { data: { session_keys_revoked: revoked }, message: 'Your password has been changed.' };
  },
});
