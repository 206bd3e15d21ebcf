import { col, defineModel } from './define.js';

// Read-only and owner-only, even against staff; rename and revoke are actions. Exports the label, the
// created and last-used times and PRF capability; the credential material never leaves.
export const Passkey = defineModel({
  className: 'Passkey',
  table: 'pky_passkeys',
  prefix: 'pky',
  primaryKey: 'pky_passkey_id',
  owner: 'pky_usr_user_id',
  ownerOnly: true,
  columns: {
    pky_passkey_id: col.serial(),
    pky_usr_user_id: col.bigint({ required: true }),
    pky_label: col.varchar(100),
    pky_credential_id: col.varchar(255, { required: true }),
    pky_public_key: col.text({ required: true }),
    pky_sign_count: col.bigint(),
    pky_prf_capable: col.bool(),
    pky_create_time: col.timestamp(),
    pky_last_used_time: col.timestamp(),
    pky_delete_time: col.timestamp(),
  },
  exposure: { readable: true, writable: false, unreadable: ['pky_credential_id', 'pky_sign_count'] },
});
