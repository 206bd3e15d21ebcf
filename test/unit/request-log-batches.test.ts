import { DummyDriver, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler, type CompiledQuery, type DatabaseConnection, type QueryResult } from 'kysely';
import { describe, expect, it } from 'vitest';
import type { DB } from '../../src/db/types.js';
import { RequestLog, type RequestLogEntry } from '../../src/http/request-log.js';

/** A database that records how many rows each request-log statement carried and holds each until released. */
function recordingDatabase() {
  const rowsPerStatement: number[] = [];
  const held: Array<() => void> = [];
  const connection: DatabaseConnection = {
    async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
      rowsPerStatement.push((query.parameters[0] as unknown[]).length);
      await new Promise<void>((release) => held.push(release));
      return { rows: [] };
    },
    // eslint-disable-next-line require-yield
    async *streamQuery() {
      throw new Error('not used');
    },
  };
  class Driver extends DummyDriver {
    override async acquireConnection(): Promise<DatabaseConnection> {
      return connection;
    }
  }
  const db = new Kysely<DB>({
    dialect: {
      createAdapter: () => new PostgresAdapter(),
      createDriver: () => new Driver(),
      createIntrospector: (k) => new PostgresIntrospector(k),
      createQueryCompiler: () => new PostgresQueryCompiler(),
    },
  });
  const releaseAll = async () => {
    // Let queued writes reach the database, then release whatever is held, until nothing is.
    for (let i = 0; i < 50; i++) {
      await new Promise((r) => setImmediate(r));
      held.splice(0).forEach((release) => release());
    }
  };
  return { db, rowsPerStatement, held, releaseAll };
}

const entry = (): RequestLogEntry => ({
  feature: 'crud',
  action: 'Post:list',
  ip: '198.51.100.9',
  userId: null,
  keyType: null,
  success: true,
  status: 200,
  errorType: null,
  responseMs: 1,
  at: new Date('2026-11-24T12:00:00Z'),
});

describe('request log batches', () => {
  it('writes a batch once batchSize entries are buffered, and an entry added during that write waits for the next one', async () => {
    const { db, rowsPerStatement, held, releaseAll } = recordingDatabase();
    const log = new RequestLog(db, { load: 'insert', batchSize: 3 });
    for (let i = 0; i < 3; i++) log.add(entry());
    const first = log.flush();
    await new Promise((r) => setImmediate(r));
    expect(rowsPerStatement).toEqual([3]);
    log.add(entry()); // arrives while the first write is held
    expect(held).toHaveLength(1);
    held[0]!();
    await first;
    await releaseAll();
    expect(rowsPerStatement).toEqual([3]);
    const second = log.flush();
    await releaseAll();
    await second;
    expect(rowsPerStatement).toEqual([3, 1]);
  });

  it('queues one write behind a running one however many entries arrive meanwhile', async () => {
    const { db, rowsPerStatement, releaseAll } = recordingDatabase();
    const log = new RequestLog(db, { load: 'insert', batchSize: 2 });
    log.add(entry());
    log.add(entry()); // the first write starts with these two
    await new Promise((r) => setImmediate(r));
    for (let i = 0; i < 7; i++) log.add(entry()); // each of these is past the batch size
    await releaseAll();
    await log.flush();
    await releaseAll();
    expect(rowsPerStatement).toEqual([2, 7]);
  });

  it('splits a large buffer into statements of at most 2000 rows', async () => {
    const { db, rowsPerStatement, releaseAll } = recordingDatabase();
    const log = new RequestLog(db, { load: 'insert', batchSize: 1_000_000 });
    for (let i = 0; i < 4500; i++) log.add(entry());
    const done = log.flush();
    await releaseAll();
    await done;
    expect(rowsPerStatement).toEqual([2000, 2000, 500]);
  });
});
