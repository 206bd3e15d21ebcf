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

/** The log's columns in order and what an entry stores in each (text cut to fit). */
const COLUMNS: ReadonlyArray<{ name: string; value: (e: RequestLogEntry) => LogValue }> = [
  { name: 'rql_feature', value: (e) => e.feature.slice(0, 50) },
  { name: 'rql_action', value: (e) => e.action?.slice(0, 100) ?? null },
  { name: 'rql_ip_address', value: (e) => e.ip.slice(0, 45) },
  { name: 'rql_usr_user_id', value: (e) => e.userId },
  { name: 'rql_api_key_type', value: (e) => e.keyType },
  { name: 'rql_was_success', value: (e) => e.success },
  { name: 'rql_status_code', value: (e) => e.status },
  { name: 'rql_error_type', value: (e) => e.errorType },
  { name: 'rql_response_ms', value: (e) => Math.round(e.responseMs) },
  { name: 'rql_create_time', value: (e) => e.at },
];
const COLUMN_NAMES = COLUMNS.map((c) => c.name);

/** Writes rows given in COPY's text format (Database.copyRows). */
export type CopyRows = (table: string, columns: readonly string[], text: string) => Promise<void>;

const COPY_ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };

/** Under load many entries share a millisecond: the last one's text is reused. */
let lastTime = { ms: Number.NaN, text: '' };

/** UTC to the millisecond, as COPY reads a timestamp. */
function copyTimestamp(d: Date): string {
  const ms = d.getTime();
  if (ms !== lastTime.ms) lastTime = { ms, text: d.toISOString().slice(0, 23).replace('T', ' ') };
  return lastTime.text;
}

/**
 * A value in COPY's text format: null is \N, booleans t/f, timestamps UTC to the millisecond, and text
 * with backslash, tab, newline and carriage return escaped.
 */
function copyValue(value: LogValue): string {
  if (value === null) return '\\N';
  if (typeof value === 'boolean') return value ? 't' : 'f';
  if (typeof value === 'number') return String(value);
  if (value instanceof Date) return copyTimestamp(value);
  return /[\\\t\n\r]/.test(value) ? value.replace(/[\\\t\n\r]/g, (c) => COPY_ESCAPES[c]!) : value;
}

const copyLine = (e: RequestLogEntry): string => COLUMNS.map((c) => copyValue(c.value(e))).join('\t');

/** One batch as COPY text: a line per entry. */
export function copyText(batch: readonly RequestLogEntry[]): string {
  return `${batch.map(copyLine).join('\n')}\n`;
}

/** Buffers entries and writes them in batches, off the request path; flush() on shutdown. */
export class RequestLog {
  private buffer: RequestLogEntry[] = [];
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();
  private waiting: Promise<void> | undefined;
  dropped = 0;

  /** `copyRows` is the database's COPY loader (one statement per batch, on both databases). */
  constructor(
    private readonly copyRows: CopyRows,
    private readonly opts: { batchSize?: number; intervalMs?: number; onError?: (e: unknown) => void } = {},
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
        await this.copyRows('rql_request_logs', COLUMN_NAMES, copyText(pending.slice(i, i + MAX_BATCH)));
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
