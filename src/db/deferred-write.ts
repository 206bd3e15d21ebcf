import type { Compilable, Kysely, RawBuilder } from 'kysely';
import type { DeferredWrite } from './pglite-dialect.js';

/**
 * Runs a write whose result nobody reads in the caller's transaction, in order, but on the embedded
 * database not on its own: it goes to the server with the transaction's next statement (its commit at
 * the latest), saving an exchange. Its failure is the failure of that statement (or of the commit), and
 * the transaction rolls back as for any failure; so it is for writes whose failure no caller handles (a
 * unique violation turned into a 409 must stay a statement of its own). On PostgreSQL it runs at once.
 */
export async function deferredWrite(trx: Kysely<any>, query: Compilable | RawBuilder<unknown>): Promise<void> {
  if (!trx.isTransaction) throw new Error('deferredWrite: only inside a transaction');
  const compiled = 'isRawBuilder' in query ? query.compile(trx) : query.compile();
  const write: DeferredWrite = { ...compiled, deferred: true };
  await trx.executeQuery(write);
}
