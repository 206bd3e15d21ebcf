import type { Kysely } from 'kysely';
import { runStatements } from './run-statements.js';

// A retired unlocker keeps no copy of the vault key (DESIGN 10): wraps retired, spent recovery codes and
// the wraps of revoked passkeys lose their wrapped key and salt (the rows stay, so a spent code is still
// known as spent). From now on the code destroys them when it retires them; this destroys the ones
// retired before, which still opened the vault offline with the old unlocker and any copy of the database.
export async function up(db: Kysely<any>): Promise<void> {
  await runStatements(db, [
    `update uew_user_encryption_wrappings set uew_delete_time = coalesce(uew_delete_time, now())
      where uew_delete_time is null
        and uew_pky_passkey_id in (select pky_passkey_id from pky_passkeys where pky_delete_time is not null)`,
    `update uew_user_encryption_wrappings set uew_wrapped_key = '', uew_salt = ''
      where (uew_delete_time is not null or uew_used_time is not null) and (uew_wrapped_key <> '' or uew_salt <> '')`,
  ]);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
