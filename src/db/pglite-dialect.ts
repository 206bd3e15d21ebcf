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
import { PGliteStatements } from './pglite-statements.js';

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
 * A `COPY ... FROM '/dev/blob'` statement with the data it loads: PGlite's bulk load, run through Kysely
 * (`db.executeQuery`) so that it waits its turn on the connection like any other statement.
 */
export interface CopyFromBlobQuery extends CompiledQuery {
  readonly blob: Blob;
}

class PGliteConnection implements DatabaseConnection {
  private readonly statements: PGliteStatements;
  /**
   * A transaction's BEGIN, not yet sent: it goes in the same exchange as the transaction's first
   * statement (each exchange with the embedded server costs about as much as a small statement), and
   * not at all when the transaction runs none.
   */
  private pendingBegin: string | null = null;

  constructor(private readonly db: PGlite) {
    this.statements = new PGliteStatements(db);
  }

  begin(statement: string): void {
    this.pendingBegin = statement;
  }

  /** Ends the transaction with `statement` (commit or rollback); one that never began has nothing to end. */
  async end(statement: 'commit' | 'rollback'): Promise<void> {
    if (this.pendingBegin !== null) {
      this.pendingBegin = null;
      return;
    }
    await this.executeQuery(CompiledQuery.raw(statement));
  }

  async executeQuery<R>(compiled: CompiledQuery): Promise<QueryResult<R>> {
    const blob = (compiled as Partial<CopyFromBlobQuery>).blob;
    const opening = this.pendingBegin ?? undefined;
    // Taken whether or not the exchange succeeds: either BEGIN ran (the transaction is open, failed or
    // not, and the rollback ends it) or it did not (and a rollback outside a transaction is harmless).
    this.pendingBegin = null;
    if (blob && opening !== undefined) await this.statements.run(opening, []);
    const result = blob
      ? await this.db.query<R>(compiled.sql, compiled.parameters as unknown[], { blob })
      : await this.statements.run<R>(compiled.sql, compiled.parameters, opening);
    const affected = result.affectedRows;
    return {
      rows: result.rows,
      ...(affected !== undefined && !/^\s*select/i.test(compiled.sql)
        ? { numAffectedRows: BigInt(affected) }
        : {}),
    };
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
