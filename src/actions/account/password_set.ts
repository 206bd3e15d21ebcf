import { validationError, businessError } from '../../http/errors.js';
import { defineAction } from '../define.js';
import { consumeCode } from './codes.js';
import { changePassword, newPasswordField } from './password.js';

/** First sign-in of an account created without a password: the activation code mailed to it proves the address. */
export default defineAction({
  name: 'password_set',
  description: 'Set the password on first login with an activation code',
  requires_session: false,
  mutates: true,
  input: {
    act_code: { type: 'string', required: true, max_length: 128 },
    password: newPasswordField,
    password_confirm: { type: 'password', required: true, max_length: 255 },
  },
  async run({ input, db, clock, recordFailedAuth }) {
    if (input.password_confirm !== input.password) throw validationError({ password_confirm: 'does not match the password' });
    const now = clock.now();
    const userId = await consumeCode(db, input.act_code, 'activation', now);
    if (userId === null) {
      await recordFailedAuth();
      throw businessError('This activation code is invalid, already used or expired', { reason: 'invalid_code' });
    }
    await changePassword(db, userId, input.password, now);
    await db
      .updateTable('usr_users')
      .set({ usr_is_activated: true, usr_email_is_verified: true, usr_email_is_verified_time: now })
      .where('usr_user_id', '=', userId)
      .execute();
    return { data: { user_id: userId }, message: 'Your password has been set. Please sign in.', redirect: '/login' };
  },
});
