import type { PGlite } from '@electric-sql/pglite';
import {
  CompiledQuery,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type DatabaseConnection,
  type DatabaseIntrospector,
  type Dialect,
  type Driver,
  type Kysely,
  type QueryResult,
  type TransactionSettings,
} from 'kysely';
import { PGliteStatements, type Statement } from './pglite-statements.js';

/**
 * How long the one PGlite connection may pass from holder to holder within one turn of the event loop.
 * PGlite runs in this thread and settles every query through microtasks, never through the event loop:
 * without a bound, a queue of waiting statements (50 concurrent requests of two or three statements each)
 * ran back to back in one turn, which then lasted 150 ms to over a second under load while no socket was
 * read, no response flushed and no timer ran. Past the budget, the next holder gets the connection on the
 * next turn (setImmediate, after the poll phase), still in arrival order.
 */
export const TURN_BUDGET_MS = 8;

/**
 * Serialises use of the one PGlite connection, first come first served: a transaction holds it from
 * BEGIN to COMMIT. Hand-overs yield to the event loop once the current turn has used TURN_BUDGET_MS.
 */
export class ConnectionMutex {
  private readonly waiting: Array<() => void> = [];
  private held = false;
  /** When the connection was first used in the current turn of the event loop; undefined between turns. */
  private turnStart: number | undefined;
  private nextTurnScheduled = false;

  constructor(
    private readonly budgetMs = TURN_BUDGET_MS,
    private readonly now: () => number = () => performance.now(),
  ) {}

  lock(): Promise<() => void> {
    return new Promise((resolve) => {
      const grant = () => resolve(this.releaser());
      if (!this.held && this.waiting.length === 0 && this.markTurn() < this.budgetMs) {
        this.held = true;
        grant();
        return;
      }
      this.waiting.push(grant);
      if (!this.held) this.scheduleNextTurn();
    });
  }

  /** Time used in this turn so far; the first use in a turn starts the clock and schedules its reset. */
  private markTurn(): number {
    const now = this.now();
    if (this.turnStart === undefined) {
      this.turnStart = now;
      setImmediate(() => (this.turnStart = undefined));
    }
    return now - this.turnStart;
  }

  /** The first waiter gets the connection on the next turn, after the event loop has polled. */
  private scheduleNextTurn(): void {
    if (this.nextTurnScheduled) return;
    this.nextTurnScheduled = true;
    setImmediate(() => {
      this.nextTurnScheduled = false;
      if (this.held || this.waiting.length === 0) return;
      this.held = true;
      this.markTurn();
      this.waiting.shift()!();
    });
  }

  private releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      if (this.waiting.length > 0 && this.markTurn() < this.budgetMs) {
        this.waiting.shift()!();
        return;
      }
      this.held = false;
      if (this.waiting.length > 0) this.scheduleNextTurn();
    };
  }
}

/**
 * A write whose result nobody reads, deferred inside a transaction to go with the transaction's next
 * statement (its commit at the latest): see deferredWrite.
 */
export interface DeferredWrite extends CompiledQuery {
  readonly deferred: true;
}

/**
 * A `COPY ... FROM '/dev/blob'` statement with the data it loads: PGlite's bulk load, run through Kysely
 * (`db.executeQuery`) so that it waits its turn on the connection like any other statement.
 */
export interface CopyFromBlobQuery extends CompiledQuery {
  readonly blob: Blob;
}

class PGliteConnection implements DatabaseConnection {
  private readonly statements: PGliteStatements;
  /**
   * What the open transaction has not sent yet: its BEGIN and the writes deferred to its next statement
   * (deferredWrite). They go in the same exchange as the next statement (each exchange with the embedded
   * server costs about as much as a small statement); a transaction that runs nothing sends nothing.
   */
  private unsent: Statement[] = [];
  private inTransaction = false;
  /** Whether the open transaction's BEGIN has gone to the server. */
  private begun = false;

  constructor(private readonly db: PGlite) {
    this.statements = new PGliteStatements(db);
  }

  begin(statement: string): void {
    this.inTransaction = true;
    this.begun = false;
    this.unsent = [{ sql: statement, parameters: [] }];
  }

  /** Ends the transaction with `statement`: a commit sends what is unsent with it; a rollback drops it. */
  async end(statement: 'commit' | 'rollback'): Promise<void> {
    this.inTransaction = false;
    const unsent = this.unsent;
    if (statement === 'rollback') this.unsent = [];
    // A transaction that never reached the server has nothing to end, unless a commit has writes to send.
    if (!this.begun && (statement === 'rollback' || unsent.length === 1)) {
      this.unsent = [];
      return;
    }
    await this.run(CompiledQuery.raw(statement));
  }

  async executeQuery<R>(compiled: CompiledQuery): Promise<QueryResult<R>> {
    if ((compiled as Partial<DeferredWrite>).deferred === true && this.inTransaction) {
      this.unsent.push({ sql: compiled.sql, parameters: compiled.parameters });
      return { rows: [] };
    }
    const result = await this.run<R>(compiled);
    const affected = result.affectedRows;
    return {
      rows: result.rows,
      ...(affected !== undefined && !/^\s*select/i.test(compiled.sql)
        ? { numAffectedRows: BigInt(affected) }
        : {}),
    };
  }

  private async run<R>(compiled: CompiledQuery): Promise<{ rows: R[]; affectedRows: number | undefined }> {
    const blob = (compiled as Partial<CopyFromBlobQuery>).blob;
    // Taken whether or not the exchange succeeds: what ran is in the transaction (a failure leaves it
    // aborted, and the rollback ends it); what did not run never will.
    const before = this.unsent;
    this.unsent = [];
    if (this.inTransaction) this.begun = true;
    if (blob) {
      if (before.length > 0) await this.statements.run('select 1', [], before);
      const loaded = await this.db.query<R>(compiled.sql, compiled.parameters as unknown[], { blob });
      return { rows: loaded.rows, affectedRows: loaded.affectedRows };
    }
    return this.statements.run<R>(compiled.sql, compiled.parameters, before);
  }

  // eslint-disable-next-line require-yield
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('streaming is not supported on the embedded database');
  }
}

class PGliteDriver implements Driver {
  private readonly mutex = new ConnectionMutex();
  private readonly releases = new WeakMap<DatabaseConnection, () => void>();
  private readonly connection: PGliteConnection;

  constructor(db: PGlite) {
    this.connection = new PGliteConnection(db);
  }

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    const release = await this.mutex.lock();
    this.releases.set(this.connection, release);
    return this.connection;
  }

  async beginTransaction(conn: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    const isolation = settings.isolationLevel ? ` isolation level ${settings.isolationLevel}` : '';
    (conn as PGliteConnection).begin(`begin${isolation}`);
  }

  async commitTransaction(conn: DatabaseConnection): Promise<void> {
    await (conn as PGliteConnection).end('commit');
  }

  async rollbackTransaction(conn: DatabaseConnection): Promise<void> {
    await (conn as PGliteConnection).end('rollback');
  }

  async releaseConnection(conn: DatabaseConnection): Promise<void> {
    const release = this.releases.get(conn);
    this.releases.delete(conn);
    release?.();
  }

  async destroy(): Promise<void> {}
}

/** Kysely's PostgreSQL dialect, driven by an in-process PGlite instance. */
export class PGliteDialect implements Dialect {
  constructor(private readonly db: PGlite) {}
  createAdapter() {
    return new PostgresAdapter();
  }
  createDriver(): Driver {
    return new PGliteDriver(this.db);
  }
  createQueryCompiler() {
    return new PostgresQueryCompiler();
  }
  createIntrospector(db: Kysely<any>): DatabaseIntrospector {
    return new PostgresIntrospector(db);
  }
}
