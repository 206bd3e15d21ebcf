import { UserInputError, createUser } from '../../accounts/users.js';
import { isUniqueViolation } from '../../db/errors.js';
import { validationError } from '../../http/errors.js';
import { defineAction } from '../define.js';
import { field, options } from '../form.js';
import { CONTACT_CHANNELS, CONTACT_CHANNEL_LABELS } from './contact.js';
import { newPasswordField } from './password.js';

export default defineAction({
  name: 'register',
  description: 'Register a user account',
  requires_session: false,
  mutates: true,
  input: {
    usr_first_name: { type: 'string', required: true, max_length: 32 },
    usr_last_name: { type: 'string', max_length: 32 },
    usr_email: { type: 'email', required: true, max_length: 64 },
    password: newPasswordField,
    // Optional: a client that asks twice sends it, and then it must match.
    password_confirm: { type: 'password', max_length: 255 },
    newsletter: { type: 'bool' },
    contact_preferences: { type: 'array', items: { type: 'string', options: CONTACT_CHANNELS }, max: CONTACT_CHANNELS.length },
  },
  async run({ input, db, clock, ip, mail, settings, web }) {
    if (input.password_confirm != null && input.password_confirm !== input.password) throw validationError({ password_confirm: 'does not match the password' });
    const now = clock.now();
    let userId: number;
    try {
      userId = await createUser(db, { email: input.usr_email, password: input.password, firstName: input.usr_first_name, lastName: input.usr_last_name || null, now });
    } catch (e) {
      const taken = (e instanceof UserInputError && e.field === 'email') || isUniqueViolation(e);
      if (taken) throw validationError({ usr_email: 'is already registered' });
      throw e;
    }
    const channels = input.newsletter ? (input.contact_preferences ?? ['email']) : [];
    await db
      .updateTable('usr_users')
      .set({
        usr_signup_ip: ip.slice(0, 64),
        usr_contact_preferences: [...new Set(channels)].join(','),
        usr_contact_preference_last_changed: now,
      })
      .where('usr_user_id', '=', userId)
      .execute();
    // With email_welcome_active on, the welcome is the member email of member.created (DESIGN 15) instead.
    if (!settings.bool('email_welcome_active')) mail({
      to: input.usr_email,
      subject: `Welcome to ${settings.string('site_name')}`,
      text: `Hello ${input.usr_first_name},\n\nyour account has been created. You can sign in with this email address.\n`,
      template: 'welcome',
    });
    // Registering from a website page signs that browser session in, as /login would (after the commit).
    if (web) {
      web.signInAfterSuccess(userId);
      return { data: { user_id: userId, email: input.usr_email, signed_in: true }, message: 'Your account has been created and you are signed in.', redirect: '/pricing' };
    }
    return { data: { user_id: userId, email: input.usr_email }, message: 'Your account has been created.', redirect: '/login' };
  },
  form: () => ({
    submit_label: 'Create account',
    fields: [
      field.text('usr_first_name', 'First name', { required: true, maxlength: 32 }),
      field.text('usr_last_name', 'Last name', { maxlength: 32 }),
      field.email('usr_email', 'Email address', { required: true, maxlength: 64 }),
      field.password('password', 'Password', { required: true, maxlength: 255, min: newPasswordField.min }),
      field.password('password_confirm', 'Confirm password', { maxlength: 255 }),
      field.checkbox('newsletter', 'Keep me informed', {
        value: false,
        visibility_rules: { checked: { show: ['contact_preferences'] }, unchecked: { hide: ['contact_preferences'] } },
      }),
      field.checkboxList('contact_preferences', 'How may we contact you?', options(CONTACT_CHANNEL_LABELS), { value: ['email'] }),
    ],
  }),
});
