import { sql, type Kysely } from 'kysely';

/** Runs DDL one statement at a time (the embedded driver takes a single statement per query). */
export async function runStatements(db: Kysely<any>, statements: string[]): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}
