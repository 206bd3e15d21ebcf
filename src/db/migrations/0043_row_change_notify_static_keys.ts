import type { Kysely } from 'kysely';
import { CACHED } from './0028_row_change_notify.js';
import { runStatements } from './run-statements.js';

// 0028's row trigger found each table's key with `to_jsonb(NEW) ->> key`, building a JSON document of the
// whole row on every write to find one column: on usr_users that was about 60 us of a 250 us update on the
// embedded database. Each cached table now has a function naming its key column; the notification is the
// same ('gatehouse_changes', '<table>:<primary key>'), on the same tables as 0028.
export async function up(db: Kysely<any>): Promise<void> {
  await runStatements(db, [
    ...Object.entries(CACHED).flatMap(([table, key]) => [
      `create or replace function gh_notify_${table}_change() returns trigger language plpgsql as $$
       begin
         perform pg_notify('gatehouse_changes', '${table}:' ||
           (case when TG_OP = 'DELETE' then OLD.${key} else NEW.${key} end));
         return null;
       end
       $$`,
      `drop trigger ${table}_row_changes on ${table}`,
      `create trigger ${table}_row_changes after insert or update or delete on ${table}
       for each row execute function gh_notify_${table}_change()`,
    ]),
    `drop function gh_notify_row_change()`,
  ]);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
