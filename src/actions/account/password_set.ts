import { defineAction } from '../define.js';
import { codePasswordInput, redeemPasswordCode } from './codes.js';
import { changePassword } from './password.js';

/** First sign-in of an account created without a password: the activation code mailed to it proves the address. */
export default defineAction({
  name: 'password_set',
  description: 'Set the password on first login with an activation code',
  requires_session: false,
  mutates: true,
  input: codePasswordInput,
  async run({ input, db, clock, recordFailedAuth }) {
    const now = clock.now();
    const userId = await redeemPasswordCode({ input, db, now, recordFailedAuth }, 'activation', 'This activation code is invalid, already used or expired');
    await changePassword(db, userId, input.password, now);
    await db
      .updateTable('usr_users')
      .set({ usr_is_activated: true, usr_email_is_verified: true, usr_email_is_verified_time: now })
      .where('usr_user_id', '=', userId)
      .execute();
    return { data: { user_id: userId }, message: 'Your password has been set. Please sign in.', redirect: '/login' };
  },
});
