import { findUserIdByEmail } from '../../accounts/users.js';
import { defineAction } from '../define.js';
import { field } from '../form.js';
import { issueCode } from '../../accounts/activation-codes.js';

/** Identical whether or not the address has an account, so the action cannot be used to probe for members. */
export const ANSWER = 'If an account exists for that email address, a link to reset its password is on its way.';

export default defineAction({
  name: 'password_reset_1',
  description: 'Request a password reset email',
  requires_session: false,
  mutates: true,
  input: {
    email: { type: 'email', required: true, max_length: 64 },
  },
  async run({ input, db, clock, settings, mail, baseUrl }) {
    const userId = await findUserIdByEmail(db, input.email);
    const user = userId === undefined
      ? undefined
      : await db.selectFrom('usr_users').select(['usr_email', 'usr_first_name', 'usr_is_disabled']).where('usr_user_id', '=', userId).executeTakeFirst();
    if (userId !== undefined && user && !user.usr_is_disabled) {
      const code = await issueCode(db, userId, 'password_reset', clock.now());
      // The link opens the website's reset page (src/web/pages/password-reset.ts); an app takes the code.
      mail({
        to: user.usr_email,
        subject: `Reset your ${settings.string('site_name')} password`,
        text:
          `Hello ${user.usr_first_name},\n\nto choose a new password, open\n${baseUrl}/password-reset?act_code=${code}\n` +
          `or enter the code ${code} in the app. The link works once, for one hour.\n\n` +
          `If you did not ask for this, ignore this message.\n`,
        template: 'password_reset',
      });
    }
    return { data: {}, message: ANSWER };
  },
  form: () => ({
    submit_label: 'Send reset link',
    fields: [field.email('email', 'Email address', { required: true, maxlength: 64 })],
  }),
});
