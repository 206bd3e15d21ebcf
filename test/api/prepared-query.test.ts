import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import type { Database } from '../../src/db/database.js';
import { preparedQuery } from '../../src/db/prepared.js';
import { openTestDatabase } from '../helpers/database.js';

describe('preparedQuery: built once, run with new values', () => {
  let database: Database;
  beforeAll(async () => {
    database = await openTestDatabase();
    await sql`insert into stg_settings (stg_name, stg_value) values ('prepared_a', '1'), ('prepared_b', '2')`.execute(database.db);
  });
  afterAll(async () => database.close());

  const byName = preparedQuery((db, p: { name: string }) =>
    db.selectFrom('stg_settings').select(['stg_name', 'stg_value']).where('stg_name', '=', p.name).where('stg_value', 'is not', null),
  );

  it('returns the rows for the values of each run', async () => {
    expect(await byName(database.db, { name: 'prepared_a' })).toEqual([{ stg_name: 'prepared_a', stg_value: '1' }]);
    expect(await byName(database.db, { name: 'prepared_b' })).toEqual([{ stg_name: 'prepared_b', stg_value: '2' }]);
    expect(await byName(database.db, { name: 'absent' })).toEqual([]);
  });

  it('runs inside a transaction, on its connection', async () => {
    const seen = await database.db.transaction().execute(async (trx) => {
      await sql`update stg_settings set stg_value = '3' where stg_name = 'prepared_a'`.execute(trx);
      const inside = await byName(trx, { name: 'prepared_a' });
      throw Object.assign(new Error('roll back'), { inside });
    }).catch((e: { inside: unknown }) => e.inside);
    expect(seen).toEqual([{ stg_name: 'prepared_a', stg_value: '3' }]);
    expect(await byName(database.db, { name: 'prepared_a' })).toEqual([{ stg_name: 'prepared_a', stg_value: '1' }]);
  });

  it('keeps constant values of the query as they were built', async () => {
    const active = preparedQuery((db, p: { name: string }) =>
      db.selectFrom('stg_settings').select('stg_name').where('stg_name', '=', p.name).where('stg_value', '=', '2'),
    );
    expect(await active(database.db, { name: 'prepared_b' })).toEqual([{ stg_name: 'prepared_b' }]);
    expect(await active(database.db, { name: 'prepared_a' })).toEqual([]);
  });

  it('accepts a parameter the query does not need', async () => {
    const unused = preparedQuery((db, _p: { name: string }) => db.selectFrom('stg_settings').select('stg_name').where('stg_name', '=', 'prepared_b'));
    expect(await unused(database.db, { name: 'x' })).toEqual([{ stg_name: 'prepared_b' }]);
  });
});
