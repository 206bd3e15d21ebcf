import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.js';
import { onPostgres, openTestDatabase } from '../helpers/database.js';

// The same query must hand back the same JS values on PGlite and on node-postgres (DESIGN §1 pitfall:
// node-postgres gives int8 and count(*) as strings unless told otherwise).
describe(`database values (${onPostgres ? 'PostgreSQL' : 'PGlite'})`, () => {
  let database: Database;
  beforeAll(async () => {
    database = await openTestDatabase();
  });
  afterAll(async () => database.close());

  it('returns counts, int8, int4 and int2 as numbers, timestamps as UTC Dates and dates as text', async () => {
    const { rows } = await sql<Record<string, unknown>>`
      select count(*) as n, 9007199254740991::int8 as big, 7::int4 as i4, 3::int2 as i2,
             '2026-03-01 12:34:56'::timestamp as at, '2026-03-01'::date as day, true as yes
      from generate_series(1, 4)`.execute(database.db);
    expect(rows[0]).toEqual({
      n: 4,
      big: 9007199254740991,
      i4: 7,
      i2: 3,
      at: new Date('2026-03-01T12:34:56Z'),
      day: '2026-03-01',
      yes: true,
    });
  });

  it('counts through Kysely as numbers too', async () => {
    const row = await database.db.selectFrom('usr_users').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow();
    expect(row.n).toBe(0);
  });
});
