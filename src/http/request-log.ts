import { CompiledQuery, sql, type Kysely } from 'kysely';
import type { CopyFromBlobQuery } from '../db/pglite-dialect.js';
import type { DB } from '../db/types.js';

/** One API request as the request log keeps it: never secrets, passwords or bodies. */
export interface RequestLogEntry {
  feature: string;
  action: string | null;
  ip: string;
  userId: number | null;
  keyType: string | null;
  success: boolean;
  status: number;
  errorType: string | null;
  responseMs: number;
  at: Date;
}

const MAX_BUFFER = 10_000;
/** Rows per statement. */
const MAX_BATCH = 2000;

type LogValue = string | number | boolean | Date | null;

/** The log's columns in order: the SQL type of each and what an entry stores there (text cut to fit). */
const COLUMNS: ReadonlyArray<{ name: string; type: string; value: (e: RequestLogEntry) => LogValue }> = [
  { name: 'rql_feature', type: 'varchar', value: (e) => e.feature.slice(0, 50) },
  { name: 'rql_action', type: 'varchar', value: (e) => e.action?.slice(0, 100) ?? null },
  { name: 'rql_ip_address', type: 'varchar', value: (e) => e.ip.slice(0, 45) },
  { name: 'rql_usr_user_id', type: 'int4', value: (e) => e.userId },
  { name: 'rql_api_key_type', type: 'varchar', value: (e) => e.keyType },
  { name: 'rql_was_success', type: 'bool', value: (e) => e.success },
  { name: 'rql_status_code', type: 'int2', value: (e) => e.status },
  { name: 'rql_error_type', type: 'varchar', value: (e) => e.errorType },
  { name: 'rql_response_ms', type: 'int4', value: (e) => Math.round(e.responseMs) },
  { name: 'rql_create_time', type: 'timestamp', value: (e) => e.at },
];
const COLUMN_LIST = COLUMNS.map((c) => c.name).join(', ');

/** How a batch reaches the table: COPY on the embedded database, an array INSERT on PostgreSQL. */
export type RequestLogLoad = 'copy' | 'insert';

/**
 * One INSERT per batch with one array parameter per column (ten arrays parse and bind in about half the
 * time of ten parameters per row).
 */
function insertBatch(db: Kysely<DB>, batch: RequestLogEntry[]): Promise<unknown> {
  const arrays = COLUMNS.map((c) => sql`${batch.map(c.value)}::${sql.raw(c.type)}[]`);
  return sql`insert into rql_request_logs (${sql.raw(COLUMN_LIST)}) select * from unnest(${sql.join(arrays)})`.execute(db);
}

const COPY_ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };

/**
 * A value in COPY's text format: null is \N, booleans t/f, timestamps UTC to the millisecond, and text
 * with backslash, tab, newline and carriage return escaped.
 */
function copyValue(value: LogValue): string {
  if (value === null) return '\\N';
  if (typeof value === 'boolean') return value ? 't' : 'f';
  if (typeof value === 'number') return String(value);
  if (value instanceof Date) return value.toISOString().slice(0, 23).replace('T', ' ');
  return /[\\\t\n\r]/.test(value) ? value.replace(/[\\\t\n\r]/g, (c) => COPY_ESCAPES[c]!) : value;
}

const copyLine = (e: RequestLogEntry): string => COLUMNS.map((c) => copyValue(c.value(e))).join('\t');

/**
 * One COPY per batch: on the embedded database every statement runs on the request thread, and COPY
 * loads a batch in about two thirds of the time of the array INSERT.
 */
function copyBatch(db: Kysely<DB>, batch: RequestLogEntry[]): Promise<unknown> {
  const text = `${batch.map(copyLine).join('\n')}\n`;
  const query: CopyFromBlobQuery = { ...CompiledQuery.raw(`copy rql_request_logs (${COLUMN_LIST}) from '/dev/blob'`), blob: new Blob([text]) };
  return db.executeQuery(query);
}

/** Buffers entries and writes them in batches, off the request path; flush() on shutdown. */
export class RequestLog {
  private buffer: RequestLogEntry[] = [];
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();
  private waiting: Promise<void> | undefined;
  dropped = 0;

  constructor(
    private readonly db: Kysely<DB>,
    private readonly opts: { load?: RequestLogLoad; batchSize?: number; intervalMs?: number; onError?: (e: unknown) => void } = {},
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.flush(), this.opts.intervalMs ?? 1000);
    this.timer.unref();
  }

  add(entry: RequestLogEntry): void {
    if (this.buffer.length >= MAX_BUFFER) {
      this.dropped++;
      return;
    }
    this.buffer.push(entry);
    if (this.buffer.length >= (this.opts.batchSize ?? 1000)) void this.flush();
  }

  /**
   * Writes everything buffered so far. A write waits for the one before it; one waiting write is enough,
   * since it takes whatever is buffered when it starts (every add() past the batch size used to queue a
   * write of its own, and most of them wrote a handful of rows).
   */
  flush(): Promise<void> {
    if (!this.waiting) {
      this.waiting = this.flushing.then(() => {
        this.waiting = undefined;
        return this.writeBuffered();
      });
      this.flushing = this.waiting;
    }
    return this.waiting;
  }

  /**
   * Writes what is buffered when it starts, in batches; entries added meanwhile wait for the next write
   * (chasing them wrote a few rows per statement under steady load).
   */
  private async writeBuffered(): Promise<void> {
    const pending = this.buffer;
    this.buffer = [];
    for (let i = 0; i < pending.length; i += MAX_BATCH) {
      try {
        await (this.opts.load === 'copy' ? copyBatch : insertBatch)(this.db, pending.slice(i, i + MAX_BATCH));
      } catch (e) {
        this.opts.onError?.(e);
      }
    }
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.flush();
  }
}
