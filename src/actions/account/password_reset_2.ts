import { defineAction } from '../define.js';
import { field } from '../form.js';
import { retireCodes } from '../../accounts/activation-codes.js';
import { codePasswordInput, redeemPasswordCode } from './codes.js';
import { changePassword, newPasswordField } from './password.js';

export default defineAction({
  name: 'password_reset_2',
  description: 'Set a new password with a reset code',
  requires_session: false,
  mutates: true,
  input: codePasswordInput,
  async run({ input, db, clock, recordFailedAuth }) {
    const now = clock.now();
    const userId = await redeemPasswordCode({ input, db, now, recordFailedAuth }, 'password_reset', 'This reset code is invalid, already used or expired');
    await retireCodes(db, userId, 'password_reset', now);
    const revoked = await changePassword(db, userId, input.password, now);
    return { data: { session_keys_revoked: revoked }, message: 'Your password has been changed. Please sign in.', redirect: '/login' };
  },
  form: ({ query }) => ({
    submit_label: 'Set new password',
    fields: [
      field.hidden('act_code', query.act_code ?? ''),
      field.password('password', 'New password', { required: true, maxlength: 255, min: newPasswordField.min }),
      field.password('password_confirm', 'Confirm new password', { required: true, maxlength: 255 }),
    ],
  }),
});
