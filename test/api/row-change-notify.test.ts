import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROW_CHANGES, type Feed } from '../../src/db/change-feed.js';
import type { Database } from '../../src/db/database.js';
import { onPostgres, openTestDatabase } from '../helpers/database.js';

/** The tables servers cache rows of, with their key column (migrations 0028 and 0043). */
const CACHED_TABLES = [
  'apk_api_keys',
  'usr_users',
  'grm_group_members',
  'sbt_subscription_tiers',
  'stg_settings',
  'plg_plugins',
  'pst_posts',
  'pag_pages',
  'pro_products',
  'evt_events',
];

// Every write to a cached table, by any process, notifies '<table>:<primary key>' (what servers forget).
describe(`row-change notifications (${onPostgres ? 'PostgreSQL' : 'PGlite'})`, () => {
  let database: Database;
  let feed: Feed;
  const seen: string[] = [];
  const until = async (payload: string) => {
    for (let i = 0; i < 200 && !seen.includes(payload); i++) await new Promise((r) => setTimeout(r, 10));
    expect(seen).toContain(payload);
  };

  beforeAll(async () => {
    database = await openTestDatabase();
    let live!: () => void;
    const listening = new Promise<void>((resolve) => (live = resolve));
    feed = database.changes.feed(ROW_CHANGES, { changed: (payload) => seen.push(payload), live: (isLive) => isLive && live() });
    feed.start();
    await listening;
  });
  afterAll(async () => {
    await feed.stop();
    await database.close();
  });

  it('names the row of an insert, an update and a delete, by an integer key', async () => {
    const db = database.db;
    const { usr_user_id: id } = await db
      .insertInto('usr_users')
      .values({ usr_email: 'row-change@example.com', usr_first_name: 'Row', usr_permission: 0, usr_is_activated: true, usr_create_time: new Date(), usr_update_time: new Date() })
      .returning('usr_user_id')
      .executeTakeFirstOrThrow();
    await until(`usr_users:${id}`);
    seen.length = 0;
    await db.updateTable('usr_users').set({ usr_first_name: 'Changed' }).where('usr_user_id', '=', id).execute();
    await until(`usr_users:${id}`);
    seen.length = 0;
    await db.deleteFrom('usr_users').where('usr_user_id', '=', id).execute();
    await until(`usr_users:${id}`);
  });

  it('names the row by a text key', async () => {
    seen.length = 0;
    await database.db.insertInto('plg_plugins').values({ plg_name: 'row-change-probe', plg_is_active: false }).execute();
    await until('plg_plugins:row-change-probe');
    seen.length = 0;
    await database.db.deleteFrom('plg_plugins').where('plg_name', '=', 'row-change-probe').execute();
    await until('plg_plugins:row-change-probe');
  });

  it('has a row trigger and a truncate trigger on every cached table, and no other table', async () => {
    const { rows } = await sql<{ table: string; trigger: string }>`
      select c.relname as "table", t.tgname as "trigger" from pg_trigger t join pg_class c on c.oid = t.tgrelid
      where not t.tgisinternal and (t.tgname like '%\_row\_changes' or t.tgname like '%\_truncated')
      order by 1, 2`.execute(database.db);
    const expected = CACHED_TABLES.flatMap((table) => [`${table}_row_changes`, `${table}_truncated`]).sort();
    expect(rows.map((r) => r.trigger).sort()).toEqual(expected);
    // Each names its key column (0043), rather than finding it in a JSON copy of the row (0028).
    const generic = await sql<{ n: number }>`select count(*) as n from pg_proc where proname = 'gh_notify_row_change'`.execute(database.db);
    expect(generic.rows).toEqual([{ n: 0 }]);
  });
});
