import type { Kysely } from 'kysely';
import type { DB } from '../db/types.js';

/** Runs fn in the caller's transaction when given one, else in a new transaction. */
export function inTransaction<T>(db: Kysely<DB>, fn: (trx: Kysely<DB>) => Promise<T>): Promise<T> {
  return db.isTransaction ? fn(db) : db.transaction().execute(fn);
}
