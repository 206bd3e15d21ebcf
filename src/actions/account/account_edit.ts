import { sql } from 'kysely';
import { MEMBER_COLUMNS, memberBefore, recordMemberUpdated } from '../../accounts/member-events.js';
import { formatTimestamp } from '../../lib/time.js';
import { isUniqueViolation } from '../../db/errors.js';
import { validationError } from '../../http/errors.js';
import { defineAction, type FormUser } from '../define.js';
import { field, options } from '../form.js';

export const GENDERS = ['female', 'male', 'non_binary', 'prefer_not_to_say', 'self_describe'] as const;
const GENDER_LABELS: Record<(typeof GENDERS)[number], string> = {
  female: 'Female',
  male: 'Male',
  non_binary: 'Non-binary',
  prefer_not_to_say: 'Prefer not to say',
  self_describe: 'Let me describe myself',
};
const TIMEZONES = new Set(Intl.supportedValuesOf('timeZone').concat('UTC'));

/** A stored usr_gender that is not one of the options is a self description. */
function genderChoice(stored: unknown): { gender: string | null; self: string | null } {
  if (typeof stored !== 'string' || stored === '') return { gender: null, self: null };
  if ((GENDERS as readonly string[]).includes(stored) && stored !== 'self_describe') return { gender: stored, self: null };
  return { gender: 'self_describe', self: stored };
}

/**
 * What the update hands back: the profile's columns and member.updated's. Named, not `*`: a statement
 * returning `*` is planned again on every run (db/statement-shape.ts).
 */
const WRITTEN_COLUMNS = [
  ...new Set([
    'usr_user_id',
    'usr_first_name',
    'usr_last_name',
    'usr_nickname',
    'usr_email',
    'usr_email_is_verified',
    'usr_timezone',
    'usr_bio',
    'usr_date_of_birth',
    'usr_gender',
    ...MEMBER_COLUMNS,
  ] as const),
];

function profile(u: Record<string, unknown>) {
  const { gender, self } = genderChoice(u.usr_gender);
  return {
    user_id: u.usr_user_id,
    first_name: u.usr_first_name,
    last_name: u.usr_last_name,
    nickname: u.usr_nickname,
    email: u.usr_email,
    email_is_verified: u.usr_email_is_verified,
    timezone: u.usr_timezone,
    bio: u.usr_bio,
    date_of_birth: u.usr_date_of_birth,
    gender,
    gender_self_describe: self,
  };
}

export default defineAction({
  name: 'account_edit',
  description: 'Update the profile fields of the signed-in user',
  mutates: true,
  input: {
    usr_first_name: { type: 'string', required: true, max_length: 32 },
    usr_last_name: { type: 'string', max_length: 32 },
    usr_nickname: { type: 'string', max_length: 32 },
    usr_email: { type: 'email', required: true, max_length: 64 },
    usr_timezone: { type: 'string', max_length: 32 },
    usr_bio: { type: 'text', max_length: 500 },
    usr_date_of_birth: { type: 'date' },
    usr_gender: { type: 'string', options: GENDERS },
    // Not a column: the text stored in usr_gender when usr_gender is 'self_describe'.
    gender_self_describe: { type: 'string', max_length: 30 },
  },
  async run({ input, user: me, db, clock }) {
    const now = clock.now();
    const errors: Record<string, string> = {};
    if (input.usr_timezone && !TIMEZONES.has(input.usr_timezone)) errors.usr_timezone = 'is not a known time zone';
    if (input.usr_date_of_birth && input.usr_date_of_birth > formatTimestamp(now).slice(0, 10)) errors.usr_date_of_birth = 'must not be in the future';
    if (input.usr_gender === 'self_describe' && !input.gender_self_describe) errors.gender_self_describe = 'is required when describing yourself';
    // The member's row as it is, once: the address to compare with, and member.updated's `before`.
    const before = await memberBefore(db, me.usr_user_id);
    if (typeof before.usr_email !== 'string') throw new Error(`account_edit: user ${me.usr_user_id} has no row`);
    const emailChanged = input.usr_email.toLowerCase() !== before.usr_email.toLowerCase();
    if (emailChanged) {
      const taken = await db
        .selectFrom('usr_users')
        .select('usr_user_id')
        .where(sql<string>`lower(usr_email)`, '=', input.usr_email.toLowerCase())
        .where('usr_delete_time', 'is', null)
        .where('usr_user_id', '!=', me.usr_user_id)
        .executeTakeFirst();
      if (taken) errors.usr_email = 'is already used by another account';
    }
    if (Object.keys(errors).length > 0) throw validationError(errors);

    // The check above can race another account taking the address; the unique index has the last word.
    const updated = await db
      .updateTable('usr_users')
      .set({
        usr_first_name: input.usr_first_name,
        usr_last_name: input.usr_last_name || null,
        usr_nickname: input.usr_nickname || null,
        usr_email: input.usr_email,
        ...(emailChanged ? { usr_email_is_verified: false, usr_email_is_verified_time: null } : {}),
        ...(input.usr_timezone ? { usr_timezone: input.usr_timezone } : {}),
        usr_bio: input.usr_bio || null,
        usr_date_of_birth: input.usr_date_of_birth ?? null,
        usr_gender: input.usr_gender === 'self_describe' ? (input.gender_self_describe ?? null) : (input.usr_gender ?? null),
        usr_update_time: now,
      })
      .where('usr_user_id', '=', me.usr_user_id)
      .returning(WRITTEN_COLUMNS)
      .executeTakeFirstOrThrow()
      .catch((e: unknown) => {
        if (isUniqueViolation(e)) throw validationError({ usr_email: 'is already used by another account' });
        throw e;
      });
    await recordMemberUpdated(db, clock, me.usr_user_id, before, updated);
    return { data: { user: profile(updated) }, message: 'Your profile has been saved.' };
  },
  form: ({ user }) => {
    const p = profile(user ?? ({ usr_user_id: 0 } as FormUser));
    const genderOptions = options(GENDER_LABELS);
    return {
      submit_label: 'Save profile',
      fields: [
        field.text('usr_first_name', 'First name', { value: p.first_name ?? '', required: true, maxlength: 32 }),
        field.text('usr_last_name', 'Last name', { value: p.last_name ?? '', maxlength: 32 }),
        field.text('usr_nickname', 'Display name', { value: p.nickname ?? '', maxlength: 32 }),
        field.email('usr_email', 'Email address', { value: p.email ?? '', required: true, maxlength: 64 }),
        field.text('usr_timezone', 'Time zone', { value: p.timezone ?? 'UTC', maxlength: 32 }),
        field.date('usr_date_of_birth', 'Date of birth', { value: p.date_of_birth ?? null }),
        field.drop('usr_gender', 'Gender', genderOptions, {
          value: p.gender,
          visibility_rules: Object.fromEntries(
            GENDERS.map((g) => [g, g === 'self_describe' ? { show: ['gender_self_describe'] } : { hide: ['gender_self_describe'] }]),
          ),
        }),
        field.text('gender_self_describe', 'Your description', { value: p.gender_self_describe ?? '', maxlength: 30 }),
        field.textarea('usr_bio', 'About you', { value: p.bio ?? '', maxlength: 500 }),
      ],
    };
  },
});
