import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { PGlite } from '@electric-sql/pglite';
import { CompiledQuery, Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { from as copyFromStdin } from 'pg-copy-streams';
import { ChangeFeed, type ChangeFeedHandlers, type Feed } from './change-feed.js';
import { PGliteChangeFeed } from './pglite-change-feed.js';
import { assertPlainIdentifier } from './identifier.js';
import { PGliteDialect, type CopyFromBlobQuery } from './pglite-dialect.js';
import type { DB } from './types.js';
import { planMayBeKept } from './statement-shape.js';

export type DatabaseKind = 'pglite' | 'postgres';

export interface Database {
  kind: DatabaseKind;
  db: Kysely<DB>;
  /** Present only on the embedded database (for the socket server and dumps). */
  pglite?: PGlite;
  /** What tells a cache that rows may have changed. */
  changes: DatabaseChanges;
  /**
   * Loads rows given in COPY's text format (one line per row, tab-separated, in `columns` order) into
   * `table`: the cheapest bulk load on both databases, for both this process and the database server.
   */
  copyRows(table: string, columns: readonly string[], text: string): Promise<void>;
  close(): Promise<void>;
}

/** `copy table (columns) from <source>`; names come from code, and anything else is refused. */
function copyStatement(table: string, columns: readonly string[], source: string): string {
  for (const name of [table, ...columns]) assertPlainIdentifier(name, 'copyRows: not a plain identifier');
  return `copy ${table} (${columns.join(', ')}) from ${source}`;
}

export interface DatabaseChanges {
  /**
   * Calls `listener` once this process's writes are visible to other connections: after a write
   * statement outside a transaction, and after the commit (or rollback) of a transaction that wrote,
   * with the tables written (null when a statement's table is not known: anything may have changed).
   * Only where notifications arrive after the write completes (PostgreSQL); on the embedded database
   * they arrive while it completes, and this never calls. Returns the unsubscribe.
   */
  onLocalWrite(listener: (tables: ReadonlySet<string> | null) => void): () => void;
  /** A LISTEN on `channel` (every process's notifications, this one's included), not yet started. */
  feed(channel: string, handlers: ChangeFeedHandlers): Feed;
}

export interface OpenOptions {
  /** PostgreSQL connection string; when absent the embedded database is used. */
  databaseUrl?: string;
  pgPoolMax?: number;
  /** PGlite data directory; absent means in memory. */
  dataDir?: string;
  /** A PGlite dump (dumpDataDir) to start from, used by tests to skip migrations. */
  loadDataDir?: Blob;
  /**
   * Named prepared statements over databaseUrl (default true). Off for the embedded database's socket:
   * every client there shares the server's one PGlite session, where a statement one client prepared
   * outlives it and collides with the next client's.
   */
  preparedStatements?: boolean;
  /** Give up on a PostgreSQL connect that has not completed after this long (default: wait). */
  connectTimeoutMs?: number;
}

// Both drivers must hand back the same JS values: int8 and counts as numbers, `timestamp` (stored in UTC)
// as a Date, and `date` as its 'YYYY-MM-DD' text.
const INT8 = 20;
const TIMESTAMP = 1114;
const DATE = 1082;

const digit = (text: string, i: number): number => text.charCodeAt(i) - 48;
/** 'YYYY-MM-DD HH:MM:SS' with up to six fraction digits (milliseconds kept), as PostgreSQL writes a timestamp. */
const PLAIN_TIMESTAMP = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d{1,6})?$/;

export function parseUtcTimestamp(text: string): Date {
  // The common shape by its digits (three times quicker than Date's parser; a page of rows has dozens);
  // anything else (infinity, BC, years before 1000 or after 9999) through Date's parser as before.
  if (text.charCodeAt(0) === 48 || !PLAIN_TIMESTAMP.test(text)) return new Date(`${text.replace(' ', 'T')}Z`);
  const fraction = text.length > 20 ? (text.slice(20) + '00').slice(0, 3) : '0';
  return new Date(
    Date.UTC(
      digit(text, 0) * 1000 + digit(text, 1) * 100 + digit(text, 2) * 10 + digit(text, 3),
      digit(text, 5) * 10 + digit(text, 6) - 1,
      digit(text, 8) * 10 + digit(text, 9),
      digit(text, 11) * 10 + digit(text, 12),
      digit(text, 14) * 10 + digit(text, 15),
      digit(text, 17) * 10 + digit(text, 18),
      Number(fraction),
    ),
  );
}

const pgParsers: Record<number, (text: string) => unknown> = {
  [INT8]: (text) => Number(text),
  [TIMESTAMP]: parseUtcTimestamp,
  [DATE]: (text) => text,
};

pg.defaults.parseInputDatesAsUTC = true;

/**
 * PostgreSQL plans an unnamed statement on every execution; a named one is planned once per connection
 * (and may keep a generic plan). Statements with an explicit column list get a name derived from their
 * text, up to a bound; `select *`-shaped texts stay unnamed (planMayBeKept).
 */
export class PreparedStatementNames {
  private readonly names = new Map<string, string>();
  static readonly MAX = 500;

  nameFor(text: string): string | undefined {
    const known = this.names.get(text);
    if (known !== undefined) return known;
    if (this.names.size >= PreparedStatementNames.MAX || !planMayBeKept(text)) return undefined;
    const name = `gh_${createHash('sha1').update(text).digest('hex').slice(0, 16)}`;
    this.names.set(text, name);
    return name;
  }
}

/** The table a write statement as Kysely writes it names; undefined when not recognised. */
const WRITE_TARGET = /^(?:insert\s+into|update|delete\s+from)\s+"?([a-z_][a-z0-9_]*)"?[\s(]/i;
const NO_WRITE = /^(?:select|begin|start transaction|savepoint|release|set|show|listen|unlisten)\b/i;
const TRANSACTION_END = /^(?:commit|rollback|end|abort)\b/i;

/**
 * What a client's statements wrote, reported when other connections can see it: at once outside a
 * transaction, at its end inside one (begin … commit).
 */
class WriteTracker {
  private inTransaction = false;
  private tables: Set<string> | null = new Set();
  private wrote = false;

  constructor(private readonly report: (tables: ReadonlySet<string> | null) => void) {}

  /** Called as a statement completes (whether or not it succeeded). */
  completed(text: string): void {
    const head = text.trimStart();
    if (/^begin\b|^start transaction\b/i.test(head)) {
      this.inTransaction = true;
      return;
    }
    if (TRANSACTION_END.test(head)) {
      const { wrote, tables } = this;
      this.inTransaction = false;
      this.wrote = false;
      this.tables = new Set();
      if (wrote) this.report(tables);
      return;
    }
    if (NO_WRITE.test(head)) return;
    const target = WRITE_TARGET.exec(head)?.[1];
    if (!this.inTransaction) {
      this.report(target ? new Set([target.toLowerCase()]) : null);
      return;
    }
    this.wrote = true;
    if (!target) this.tables = null;
    else this.tables?.add(target.toLowerCase());
  }
}

/**
 * Every statement a pooled client runs passes here: named when `statements` knows a name for its text,
 * and reported to `written` when it may have written. Kysely sends its statements as (text, values).
 */
function hookQueries(client: pg.PoolClient, statements: PreparedStatementNames | undefined, written: (tables: ReadonlySet<string> | null) => void): void {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  const writes = new WriteTracker(written);
  (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
    const [text, values] = args;
    if (typeof text !== 'string' || args.length > 2 || typeof values === 'function') return query(...args);
    const name = statements && Array.isArray(values) ? statements.nameFor(text) : undefined;
    const result = (name ? query({ name, text, values }) : query(...args)) as Promise<unknown>;
    return text.startsWith('select ') ? result : result.finally(() => writes.completed(text));
  };
}

async function openPostgres(url: string, poolMax: number, preparedStatements: boolean, connectTimeoutMs: number | undefined): Promise<Database> {
  const pool = new pg.Pool({
    connectionString: url,
    max: poolMax,
    connectionTimeoutMillis: connectTimeoutMs ?? 0,
    options: '-c TimeZone=UTC',
    types: {
      getTypeParser: ((oid: number, format?: string) =>
        pgParsers[oid] ?? pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
    },
  });
  // A pool error on an idle client must not crash the process; the next checkout reconnects.
  pool.on('error', () => {});
  const statements = preparedStatements ? new PreparedStatementNames() : undefined;
  const writeListeners = new Set<(tables: ReadonlySet<string> | null) => void>();
  const afterWrite = (tables: ReadonlySet<string> | null) => {
    for (const listener of writeListeners) listener(tables);
  };
  pool.on('connect', (client) => hookQueries(client, statements, afterWrite));
  const changes: DatabaseChanges = {
    onLocalWrite(listener) {
      writeListeners.add(listener);
      return () => writeListeners.delete(listener);
    },
    feed: (channel, handlers) => new ChangeFeed(url, channel, handlers),
  };
  const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
  try {
    await sql`select 1`.execute(db);
  } catch (e) {
    // A refused or reset first connection must not leave a pool (and a half-open connection) behind:
    // the CLI retries the server's one-client socket, and a leaked connection would hold its only slot.
    await db.destroy().catch(() => {});
    throw e;
  }
  const copyRows = async (table: string, columns: readonly string[], text: string): Promise<void> => {
    const statement = copyStatement(table, columns, 'stdin');
    const client = await pool.connect();
    let failure: Error | undefined;
    try {
      await pipeline(Readable.from([text]), client.query(copyFromStdin(statement)));
    } catch (e) {
      failure = e instanceof Error ? e : new Error(String(e));
      throw e;
    } finally {
      // A connection whose COPY failed is not trusted with the next statement: the pool replaces it.
      client.release(failure);
    }
  };
  return { kind: 'postgres', db, changes, copyRows, close: () => db.destroy() };
}

/**
 * The embedded database's buffer pool. PostgreSQL's default (128 MB) is allocated and touched when PGlite
 * starts, and WebAssembly memory is never returned: measured here, 32 MB opens at about 200 MB resident
 * instead of 300 MB, and a site's working set (10,000 posts, keys, settings) still fits in it; what does
 * not is read back from the operating system's file cache.
 */
const EMBEDDED_SHARED_BUFFERS = '32MB';

async function openPGlite(dataDir: string | undefined, loadDataDir: Blob | undefined): Promise<Database> {
  const pglite = await PGlite.create(dataDir, {
    startParams: [...PGlite.defaultStartParams, '-c', `shared_buffers=${EMBEDDED_SHARED_BUFFERS}`],
    parsers: { [DATE]: (text: string) => text },
    ...(loadDataDir ? { loadDataDir } : {}),
  });
  await pglite.exec(`set time zone 'UTC'`);
  const db = new Kysely<DB>({ dialect: new PGliteDialect(pglite) });
  return {
    kind: 'pglite',
    db,
    pglite,
    changes: {
      onLocalWrite: () => () => {},
      feed: (channel, handlers) => new PGliteChangeFeed(pglite, db, channel, handlers),
    },
    // Through Kysely, so that the load waits its turn on the one connection like any other statement.
    copyRows: async (table, columns, text) => {
      const query: CopyFromBlobQuery = { ...CompiledQuery.raw(copyStatement(table, columns, "'/dev/blob'")), blob: new Blob([text]) };
      await db.executeQuery(query);
    },
    close: async () => {
      await db.destroy();
      if (!pglite.closed) await pglite.close();
    },
  };
}

export function openDatabase(opts: OpenOptions): Promise<Database> {
  if (opts.databaseUrl) return openPostgres(opts.databaseUrl, opts.pgPoolMax ?? 10, opts.preparedStatements ?? true, opts.connectTimeoutMs);
  return openPGlite(opts.dataDir, opts.loadDataDir);
}
