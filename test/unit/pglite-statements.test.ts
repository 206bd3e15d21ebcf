import { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PGliteStatements } from '../../src/db/pglite-statements.js';

/** Statements the embedded session holds under our names (read with PGlite's own query, not ours). */
async function kept(db: PGlite): Promise<string[]> {
  const r = await db.query<{ name: string }>(`select name from pg_prepared_statements where name like 'gh\\_%' order by name`);
  return r.rows.map((row) => row.name);
}

describe('statements on the embedded database (kept parsed and planned, one exchange each)', () => {
  let db: PGlite;

  beforeAll(async () => {
    db = await PGlite.create();
    await db.exec(`set time zone 'UTC'; create table t (id int primary key, name text not null, at timestamp, doc jsonb, raw bytea, ok boolean, tags int[])`);
  });
  afterAll(async () => db.close());

  it('parses a text once and runs it again by name, with the same answers', async () => {
    const s = new PGliteStatements(db);
    const insert = 'insert into t (id, name) values ($1, $2) returning id, name';
    expect((await s.run(insert, [1, 'one'])).rows).toEqual([{ id: 1, name: 'one' }]);
    const second = await s.run(insert, [2, 'two']);
    expect(second).toEqual({ rows: [{ id: 2, name: 'two' }], affectedRows: 1 });
    expect(s.size).toBe(1);
    expect(await kept(db)).toHaveLength(1);
    expect((await s.run('select name from t where id = $1', [2])).rows).toEqual([{ name: 'two' }]);
    expect(s.size).toBe(2);
  });

  it('keeps at most its bound: the least recently used is closed before the next statement', async () => {
    await db.exec('deallocate all');
    const s = new PGliteStatements(db, 2);
    await s.run('select 1 as a', []);
    await s.run('select 2 as b', []);
    await s.run('select 1 as a', []);
    await s.run('select 3 as c', []);
    expect(s.size).toBe(2);
    await s.run('select 1 as a', []);
    expect(await kept(db)).toHaveLength(2);
  });

  it('leaves nothing behind for a statement that failed on its first run, and runs it fine after', async () => {
    await db.exec('deallocate all');
    const s = new PGliteStatements(db);
    const insert = 'insert into t (id, name) values ($1, $2)';
    await expect(s.run(insert, [1, 'duplicate'])).rejects.toMatchObject({ code: '23505' });
    expect(s.size).toBe(0);
    await s.run('select 1 as one', []);
    expect(await kept(db)).toHaveLength(1);
    expect((await s.run(insert, [3, 'three'])).affectedRows).toBe(1);
    expect(s.size).toBe(2);
  });

  it('runs a kept statement again from its text when a socket client deallocated it', async () => {
    const s = new PGliteStatements(db);
    const read = 'select name from t where id = $1';
    expect((await s.run(read, [1])).rows).toEqual([{ name: 'one' }]);
    await db.exec('deallocate all');
    expect((await s.run(read, [2])).rows).toEqual([{ name: 'two' }]);
    expect((await s.run(read, [1])).rows).toEqual([{ name: 'one' }]);
  });

  it('never keeps a select-star statement, so a column added later is in its next answer', async () => {
    await db.exec('create table wide (id int)');
    await db.exec('insert into wide values (1)');
    const s = new PGliteStatements(db);
    expect((await s.run('select * from wide', [])).rows).toEqual([{ id: 1 }]);
    expect(s.size).toBe(0);
    await db.exec('alter table wide add column extra text');
    expect((await s.run('select * from wide', [])).rows).toEqual([{ id: 1, extra: null }]);
  });

  it('lets a transaction whose first run of a statement failed roll back, and closes that statement after', async () => {
    await db.exec('deallocate all');
    const s = new PGliteStatements(db);
    await s.run('begin', []);
    await expect(s.run('insert into t (id, name) values ($1, null)', [10])).rejects.toMatchObject({ code: '23502' });
    await s.run('rollback', []);
    expect(db.isInTransaction()).toBe(false);
    expect((await s.run('select count(*)::int as n from t where id = $1', [10])).rows).toEqual([{ n: 0 }]);
    expect((await kept(db)).length).toBe(s.size);
  });

  it('sends parameters as node-postgres does: a Date as its UTC instant, objects as JSON, bytes, booleans, arrays, null', async () => {
    const s = new PGliteStatements(db);
    const at = new Date('2026-03-04T05:06:07.089Z');
    await s.run('insert into t (id, name, at, doc, raw, ok, tags) values ($1, $2, $3, $4, $5, $6, $7)', [20, 'values', at, { a: [1, 'x'] }, Buffer.from([0, 255, 7]), false, [3, 1, 2]]);
    const row = (await s.run<Record<string, unknown>>(`select to_char(at, 'YYYY-MM-DD HH24:MI:SS.MS') as at, doc, raw, ok, tags, name from t where id = $1 and $2::text is null`, [20, null])).rows[0];
    expect(row).toEqual({ at: '2026-03-04 05:06:07.089', doc: { a: [1, 'x'] }, raw: new Uint8Array([0, 255, 7]), ok: false, tags: [3, 1, 2], name: 'values' });
  });
});
