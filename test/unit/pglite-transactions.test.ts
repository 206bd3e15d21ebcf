import { PGlite } from '@electric-sql/pglite';
import { Kysely, sql } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { PGliteDialect } from '../../src/db/pglite-dialect.js';

interface Tables {
  t: { id: number; name: string };
}

// A transaction's BEGIN travels with its first statement (one exchange with the embedded server fewer
// per transaction); what the transaction does must not change.
describe('transactions on the embedded database', () => {
  let pglite: PGlite;
  let db: Kysely<Tables>;
  let exchanges: string[] = [];

  beforeAll(async () => {
    pglite = await PGlite.create();
    await pglite.exec('create table t (id int primary key, name text not null)');
    const stream = pglite.execProtocolStream.bind(pglite);
    pglite.execProtocolStream = (message, options) => {
      exchanges.push(Buffer.from(message).toString('latin1').replace(/[^\x20-\x7e]+/g, ' '));
      return stream(message, options);
    };
    db = new Kysely<Tables>({ dialect: new PGliteDialect(pglite) });
  });
  afterAll(async () => {
    await db.destroy();
    await pglite.close();
  });
  beforeEach(async () => {
    await pglite.exec('truncate t');
    exchanges = [];
  });

  it('sends BEGIN with the first statement: a transaction of one statement is two exchanges', async () => {
    const rows = await db.transaction().execute((tx) => tx.insertInto('t').values({ id: 1, name: 'one' }).returning(['id', 'name']).execute());
    expect(rows).toEqual([{ id: 1, name: 'one' }]);
    expect(exchanges).toHaveLength(2);
    expect(exchanges[0]).toMatch(/begin.*insert into "t"/);
    expect(exchanges[1]).toMatch(/commit/);
    expect((await pglite.query('select name from t')).rows).toEqual([{ name: 'one' }]);
    expect(pglite.isInTransaction()).toBe(false);
  });

  it('answers the first statement with its own rows and count, not BEGIN\'s', async () => {
    await db.insertInto('t').values([{ id: 1, name: 'one' }, { id: 2, name: 'two' }]).execute();
    const [selected, updated] = await db.transaction().execute(async (tx) => [
      await tx.selectFrom('t').select(['id', 'name']).orderBy('id').execute(),
      await tx.updateTable('t').set({ name: 'x' }).executeTakeFirst(),
    ]);
    expect(selected).toEqual([{ id: 1, name: 'one' }, { id: 2, name: 'two' }]);
    expect(updated.numUpdatedRows).toBe(2n);
    const first = await db.transaction().execute((tx) => tx.updateTable('t').set({ name: 'y' }).where('id', '=', 1).executeTakeFirst());
    expect(first.numUpdatedRows).toBe(1n);
  });

  it('sends nothing for a transaction that runs no statement', async () => {
    await db.transaction().execute(async () => {});
    await expect(db.transaction().execute(async () => { throw new Error('before any statement'); })).rejects.toThrow('before any statement');
    expect(exchanges).toEqual([]);
    expect(pglite.isInTransaction()).toBe(false);
  });

  it('rolls back when the first statement fails, and the connection serves the next transaction', async () => {
    await db.insertInto('t').values({ id: 1, name: 'one' }).execute();
    await expect(db.transaction().execute((tx) => tx.insertInto('t').values({ id: 1, name: 'again' }).execute())).rejects.toMatchObject({ code: '23505' });
    expect(pglite.isInTransaction()).toBe(false);
    await db.transaction().execute((tx) => tx.insertInto('t').values({ id: 2, name: 'two' }).execute());
    expect((await pglite.query('select id from t order by id')).rows).toEqual([{ id: 1 }, { id: 2 }]);
  });

  it('undoes every statement of a transaction that fails after its first', async () => {
    await expect(
      db.transaction().execute(async (tx) => {
        await tx.insertInto('t').values({ id: 1, name: 'one' }).execute();
        await tx.insertInto('t').values({ id: 2, name: 'two' }).execute();
        throw new Error('after two statements');
      }),
    ).rejects.toThrow('after two statements');
    expect((await pglite.query('select count(*)::int as n from t')).rows).toEqual([{ n: 0 }]);
    expect(pglite.isInTransaction()).toBe(false);
  });

  it('opens the transaction with the isolation level asked for', async () => {
    const level = await db
      .transaction()
      .setIsolationLevel('serializable')
      .execute((tx) => sql<{ level: string }>`select current_setting('transaction_isolation') as level`.execute(tx));
    expect(level.rows).toEqual([{ level: 'serializable' }]);
    expect(exchanges[0]).toMatch(/begin isolation level serializable/);
  });
});
