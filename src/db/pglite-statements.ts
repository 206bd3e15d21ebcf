import { randomBytes } from 'node:crypto';
import { parse, protocol, type PGlite } from '@electric-sql/pglite';
import pgUtils from 'pg/lib/utils.js';
import { planMayBeKept } from './statement-shape.js';

/** How many statements the embedded server keeps parsed and planned (the least recently used go first). */
export const KEPT_STATEMENTS = 200;

/**
 * SQLSTATEs that mean a kept statement is not what was kept: it was deallocated under us (26000: a
 * socket client, which shares the one session, ran DEALLOCATE ALL or DISCARD ALL) or the shape of its
 * result changed (0A000: "cached plan must not change result type", a column added to a `returning *`).
 */
const STALE_STATEMENT = new Set(['26000', '0A000']);

/**
 * A parameter as node-postgres sends it (the PostgreSQL path runs the same statements through it): text,
 * or bytes for a Buffer; a Date as its UTC instant (node-postgres writes local time with its offset, the
 * same instant; UTC keeps a `timestamp` column's value independent of the process's time zone, as
 * PGlite's own serializer did).
 */
function wireValue(value: unknown): string | Buffer | null {
  return (value instanceof Date ? value.toISOString() : pgUtils.prepareValue(value)) as string | Buffer | null;
}

/** A statement and its parameters. */
export interface Statement {
  readonly sql: string;
  readonly parameters: readonly unknown[];
}

/**
 * The last statement's count of rows written. PGlite's parseResults counts cumulatively over an exchange
 * (each result holds the sum so far), so the statements before it are taken off.
 */
function affectedRowsOf(results: ReadonlyArray<{ affectedRows?: number }>): number {
  const last = results[results.length - 1]?.affectedRows ?? 0;
  const previous = results.length > 1 ? (results[results.length - 2]?.affectedRows ?? 0) : 0;
  return last - previous;
}

/**
 * Statements on the embedded database, one exchange with its server for a statement and those sent
 * ahead of it (run's `before`), and the statements it runs most kept parsed and planned there, as a
 * PostgreSQL driver keeps prepared statements.
 *
 * PGlite's own `query` makes six passes through the WebAssembly server for one statement (Parse, a
 * Describe to pick each parameter's serializer by type, Bind, Describe, Execute, Sync) and parses and
 * plans the text every time. Here a statement is one message (Parse only the first time, then Bind,
 * Describe, Execute and Sync), its parameters sent as node-postgres sends them (the server infers their
 * types either way); the planning a statement of the key lookup's four tables took is most of its time.
 *
 * A statement selecting `*` is not kept (statement-shape.ts), as on PostgreSQL. Kept statements are named
 * in this session only. One that failed on its first run may or may not have been parsed; it and the ones
 * pushed out of the cache are closed before the next statement outside a transaction (closing a statement
 * that does not exist is no error; inside a transaction a failed Close would leave the transaction unable
 * to roll back). A kept statement found stale is forgotten and, outside a transaction, run again from its
 * text.
 */
export class PGliteStatements {
  /** Kept statements' names by their text, least recently used first. */
  private readonly names = new Map<string, string>();
  private readonly toClose: string[] = [];
  private made = 0;
  /** Names unique to this instance: the session may have others' statements (a second instance, a socket client). */
  private readonly prefix = `gh_${randomBytes(4).toString('hex')}_`;

  constructor(
    private readonly db: PGlite,
    private readonly keep = KEPT_STATEMENTS,
  ) {}

  /** How many statements are kept (for tests). */
  get size(): number {
    return this.names.size;
  }

  /**
   * Runs one statement and answers its result. `before`, statements whose results nobody reads (a
   * transaction's BEGIN, writes deferred to the next statement), run first in the same exchange: each
   * exchange with the embedded server costs about as much as a small statement. An error in any of them
   * fails the exchange, and the statements after it do not run.
   */
  async run<R>(sql: string, parameters: readonly unknown[], before: readonly Statement[] = []): Promise<{ rows: R[]; affectedRows: number | undefined }> {
    const statements = [...before, { sql, parameters }];
    try {
      return await this.exchange<R>(statements);
    } catch (e) {
      const code = (e as { code?: unknown }).code;
      if (typeof code !== 'string' || !STALE_STATEMENT.has(code)) throw e;
      // A DISCARD ALL took every kept statement; a changed result, the one that ran last (the one answered).
      if (code === '26000') this.names.clear();
      else this.forget(sql);
      if (this.db.isInTransaction()) throw e;
      return this.exchange<R>(statements);
    }
  }

  private async exchange<R>(statements: readonly Statement[]) {
    const { serialize } = protocol;
    const parts: Uint8Array[] = [];
    if (this.toClose.length > 0 && !this.db.isInTransaction()) {
      for (const name of this.toClose.splice(0)) parts.push(serialize.close({ type: 'S', name }));
    }
    const fresh: Array<{ sql: string; name: string }> = [];
    for (const { sql, parameters } of statements) {
      let name = this.names.get(sql);
      if (name === undefined) {
        // The unnamed statement ('') when its plan may not be kept: parsed and planned every time.
        const keep = planMayBeKept(sql) && !fresh.some((f) => f.sql === sql);
        name = keep ? `${this.prefix}${++this.made}` : '';
        if (keep) fresh.push({ sql, name });
        parts.push(serialize.parse({ text: sql, name }));
      } else {
        this.names.delete(sql);
        this.names.set(sql, name);
      }
      parts.push(serialize.bind({ statement: name, values: parameters.map(wireValue) }), serialize.describe({ type: 'P' }), serialize.execute({}));
    }
    parts.push(serialize.sync());
    const message = Buffer.concat(parts);
    let messages;
    try {
      // The stream form, as PGlite's `query` uses: it parses the answer as it comes (`execProtocol` would
      // also copy the raw bytes, and hands them to whatever raw-data callback the socket server left set).
      messages = await this.db.runExclusive(() => this.db.execProtocolStream(message, { syncToFs: false }));
    } catch (e) {
      for (const { name } of fresh) this.toClose.push(name);
      throw e;
    }
    for (const { sql, name } of fresh) this.remember(sql, name);
    await this.db.syncToFs();
    // A result per statement, in order: the last is the one asked for.
    const results = parse.parseResults(messages, this.db.parsers);
    const result = results[results.length - 1];
    return { rows: (result?.rows ?? []) as R[], affectedRows: result?.affectedRows === undefined ? undefined : affectedRowsOf(results) };
  }

  private remember(sql: string, name: string): void {
    this.names.set(sql, name);
    while (this.names.size > this.keep) {
      const [oldest, oldestName] = this.names.entries().next().value as [string, string];
      this.names.delete(oldest);
      this.toClose.push(oldestName);
    }
  }

  private forget(sql: string): void {
    const name = this.names.get(sql);
    if (name === undefined) return;
    this.names.delete(sql);
    this.toClose.push(name);
  }
}
