import type { Kysely } from 'kysely';
import { runStatements } from './run-statements.js';

// The request log is append-only and written in time order, so a BRIN index (a summary per block range)
// serves the retention purge's time range as well as a btree did, at almost no cost per inserted row:
// the btree was a third of the cost of writing a log row.
export async function up(db: Kysely<any>): Promise<void> {
  await runStatements(db, [
    `drop index if exists rql_request_logs_time`,
    `create index rql_request_logs_time on rql_request_logs using brin (rql_create_time)`,
  ]);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
