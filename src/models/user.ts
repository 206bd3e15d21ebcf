import { mayActOn } from '../accounts/authority.js';
import { recordMemberCreated, recordMemberDeleted, recordMemberUpdated } from '../accounts/member-events.js';
import { authError } from '../http/errors.js';
import { col, defineModel, type RecordCheck } from './define.js';

/**
 * A user writes their own row; staff write others', but never one who outranks them (the one account
 * authority rule): a staff member who could change a superadmin's email could take the account over
 * through a password reset. A row being created has no id yet and the default permission.
 */
const mayWriteUser: RecordCheck = (row, ctx) => {
  const { current_user_id, current_user_permission } = ctx.viewer;
  if (current_user_id === null) throw authError(403, 'Insufficient permission for this record');
  const actor = { usr_user_id: current_user_id, usr_permission: current_user_permission };
  const target = { usr_user_id: row.usr_user_id == null ? 0 : Number(row.usr_user_id), usr_permission: Number(row.usr_permission ?? 0) };
  if (mayActOn(actor, target)) return true;
  throw authError(403, 'Insufficient permission for this record');
};

// Declared over the table 0001_foundation created. The owner of a user row is the user itself, so the
// owner column is the primary key (never stamped on POST; a non-staff caller cannot create users).
export const User = defineModel({
  className: 'User',
  table: 'usr_users',
  prefix: 'usr',
  primaryKey: 'usr_user_id',
  owner: 'usr_user_id',
  columns: {
    usr_user_id: col.serial(),
    usr_first_name: col.varchar(32, { required: true }),
    usr_last_name: col.varchar(32),
    usr_email: col.varchar(64, { required: true }),
    usr_signup_date: col.date(),
    usr_password: col.varchar(255),
    usr_permission: col.int(),
    usr_timezone: col.varchar(32),
    usr_email_is_verified: col.bool(),
    usr_email_is_verified_time: col.timestamp(),
    usr_email_bounce_unverify_time: col.timestamp(),
    usr_is_activated: col.bool(),
    usr_is_disabled: col.bool(),
    usr_lastlogin_time: col.timestamp(),
    usr_pic_picture_id: col.int(),
    usr_phn_phone_number_id: col.int(),
    usr_contact_preferences: col.varchar(32),
    usr_disabled_time: col.timestamp(),
    usr_nickname: col.varchar(32),
    usr_authhash: col.varchar(32),
    usr_stripe_customer_id: col.varchar(32),
    usr_mailing_list_provider_id: col.varchar(64),
    usr_signup_ip: col.varchar(64),
    usr_contact_preference_last_changed: col.timestamp(),
    usr_organization_name: col.varchar(32),
    usr_create_time: col.timestamp(),
    usr_update_time: col.timestamp(),
    usr_delete_time: col.timestamp(),
    usr_password_recovery_disabled: col.bool(),
    usr_calendly_uri: col.varchar(255),
    usr_stripe_customer_id_test: col.varchar(32),
    usr_allowed_ips: col.jsonb(),
    usr_remember_tokens: col.jsonb(),
    usr_force_password_change: col.bool(),
    usr_bio: col.varchar(500),
    usr_date_of_birth: col.date(),
    usr_gender: col.varchar(30),
    usr_profile_visibility: col.varchar(20, { options: ['public', 'members_only', 'private'] }),
    usr_totp_secret: col.varchar(255),
    usr_totp_backup_codes: col.jsonb(),
    usr_totp_enabled_time: col.timestamp(),
    usr_totp_last_used_step: col.bigint(),
    usr_totp_hmac_key: col.varchar(128),
  },
  exposure: {
    readable: true,
    writable: true,
    // usr_password, usr_totp_secret and usr_totp_hmac_key are floored by name already.
    unreadable: ['usr_authhash', 'usr_remember_tokens', 'usr_totp_backup_codes', 'usr_totp_last_used_step', 'usr_allowed_ips'],
    // Privilege, verification and credential state change only through actions and the operator CLI.
    unwritable: [
      'usr_permission',
      'usr_email_is_verified',
      'usr_email_is_verified_time',
      'usr_email_bounce_unverify_time',
      'usr_is_activated',
      'usr_is_disabled',
      'usr_disabled_time',
      'usr_force_password_change',
      'usr_authhash',
      'usr_password_recovery_disabled',
      'usr_allowed_ips',
      'usr_remember_tokens',
      'usr_totp_backup_codes',
      'usr_totp_enabled_time',
      'usr_totp_last_used_step',
      'usr_stripe_customer_id',
      'usr_stripe_customer_id_test',
      'usr_mailing_list_provider_id',
      'usr_signup_ip',
      'usr_signup_date',
      'usr_lastlogin_time',
    ],
  },
  checks: { write: mayWriteUser },
  // Verification belongs to an address: a new address over CRUD is unverified, as account_edit makes it.
  beforeUpdate: async (stored, changes) => {
    if (typeof changes.usr_email !== 'string') return;
    if (changes.usr_email.toLowerCase() === String(stored.usr_email ?? '').toLowerCase()) return;
    changes.usr_email_is_verified = false;
    changes.usr_email_is_verified_time = null;
  },
  // member.created, .updated (with previous values) and .deleted, in the CRUD write's transaction.
  afterWrite: async ({ op, id, before }, ctx) => {
    if (op === 'create') await recordMemberCreated(ctx.trx, ctx.clock, id);
    else if (op === 'update') await recordMemberUpdated(ctx.trx, ctx.clock, id, before ?? {});
    else await recordMemberDeleted(ctx.trx, ctx.clock, id, before ?? {});
  },
});
