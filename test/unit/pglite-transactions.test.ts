import { PGlite } from '@electric-sql/pglite';
import { Kysely, sql } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { deferredWrite } from '../../src/db/deferred-write.js';
import { PGliteDialect } from '../../src/db/pglite-dialect.js';

/** Statement texts by name, as Parse messages named them. */
const textOfName = new Map<string, string>();

/** The texts of the statements an exchange runs (a Bind each), in order. */
function statementsOf(message: Buffer): string[] {
  const texts: string[] = [];
  const cstring = (at: number): [string, number] => {
    const end = message.indexOf(0, at);
    return [message.subarray(at, end).toString(), end + 1];
  };
  for (let at = 0; at < message.length; at += 1 + message.readInt32BE(at + 1)) {
    const type = String.fromCharCode(message[at] ?? 0);
    if (type === 'P') {
      const [name, next] = cstring(at + 5);
      textOfName.set(name, cstring(next)[0]);
    } else if (type === 'B') {
      const [, next] = cstring(at + 5);
      texts.push(textOfName.get(cstring(next)[0]) ?? '?');
    }
  }
  return texts;
}

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
      exchanges.push(statementsOf(Buffer.from(message)).join(' ; '));
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

  describe('a deferred write', () => {
    const insert = (q: Kysely<Tables>, id: number, name = `n${id}`) => q.insertInto('t').values({ id, name });
    const count = async () => Number((await pglite.query<{ n: number }>('select count(*)::int as n from t')).rows[0]?.n);

    it('goes with the next statement, which sees it, and the next statement answers its own count', async () => {
      await db.insertInto('t').values({ id: 9, name: 'nine' }).execute();
      exchanges = [];
      const [seen, updated] = await db.transaction().execute(async (tx) => {
        await deferredWrite(tx, insert(tx, 1));
        await deferredWrite(tx, insert(tx, 2));
        const rows = await tx.selectFrom('t').select('id').orderBy('id').execute();
        return [rows.map((r) => r.id), await tx.updateTable('t').set({ name: 'x' }).where('id', '=', 9).executeTakeFirst()] as const;
      });
      expect(seen).toEqual([1, 2, 9]);
      expect(updated.numUpdatedRows).toBe(1n);
      expect(exchanges).toHaveLength(3);
      expect(exchanges[0]).toMatch(/begin.*insert into "t".*insert into "t".*select "id"/);
      expect(await count()).toBe(3);
    });

    it('goes with the commit when it is the last write, and alone with BEGIN and COMMIT when it is the only one', async () => {
      await db.transaction().execute(async (tx) => {
        await insert(tx, 1).execute();
        await deferredWrite(tx, insert(tx, 2));
      });
      expect(exchanges.at(-1)).toMatch(/insert into "t".*commit/);
      exchanges = [];
      await db.transaction().execute((tx) => deferredWrite(tx, insert(tx, 3)));
      expect(exchanges).toHaveLength(1);
      expect(exchanges[0]).toMatch(/begin.*insert into "t".*commit/);
      expect(await count()).toBe(3);
    });

    it('that fails fails the commit, and the whole transaction rolls back', async () => {
      await insert(db, 1).execute();
      await expect(
        db.transaction().execute(async (tx) => {
          await tx.insertInto('t').values({ id: 2, name: 'two' }).execute();
          await deferredWrite(tx, insert(tx, 1, 'duplicate'));
        }),
      ).rejects.toMatchObject({ code: '23505' });
      expect(pglite.isInTransaction()).toBe(false);
      expect((await pglite.query('select id from t order by id')).rows).toEqual([{ id: 1 }]);
      await db.transaction().execute((tx) => deferredWrite(tx, insert(tx, 3)));
      expect(await count()).toBe(2);
    });

    it('that fails fails the statement it went with, which does not run', async () => {
      await insert(db, 1).execute();
      await expect(
        db.transaction().execute(async (tx) => {
          await deferredWrite(tx, insert(tx, 1, 'duplicate'));
          await tx.insertInto('t').values({ id: 2, name: 'two' }).execute();
        }),
      ).rejects.toMatchObject({ code: '23505' });
      expect(pglite.isInTransaction()).toBe(false);
      expect((await pglite.query('select id from t order by id')).rows).toEqual([{ id: 1 }]);
    });

    it('is dropped unsent by a rollback', async () => {
      await expect(
        db.transaction().execute(async (tx) => {
          await deferredWrite(tx, insert(tx, 1));
          throw new Error('changed my mind');
        }),
      ).rejects.toThrow('changed my mind');
      expect(exchanges).toEqual([]);
      await expect(
        db.transaction().execute(async (tx) => {
          await insert(tx, 2).execute();
          await deferredWrite(tx, insert(tx, 3));
          throw new Error('changed my mind again');
        }),
      ).rejects.toThrow('changed my mind again');
      expect(exchanges.at(-1)).not.toMatch(/insert/);
      expect(await count()).toBe(0);
    });

    it('is refused outside a transaction', async () => {
      await expect(deferredWrite(db, insert(db, 1))).rejects.toThrow('only inside a transaction');
      expect(await count()).toBe(0);
    });
  });
});
