import { Migrator, type Kysely, type Migration } from 'kysely';
import { migrations } from './migrations/index.js';

export class MigrationError extends Error {}

/**
 * Applies pending migrations, the core's and the `extra` ones its caller brings (the plugins', named
 * plugin_{name}_..., so they sort after the core's); returns the names applied by this call.
 */
export async function migrateToLatest(db: Kysely<any>, extra: Record<string, Migration> = {}): Promise<string[]> {
  const provider = { getMigrations: async () => ({ ...migrations, ...extra }) };
  // Branches add migrations in parallel; one numbered below an applied one must still apply.
  const migrator = new Migrator({ db, provider, allowUnorderedMigrations: true });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName ?? 'unknown';
    throw new MigrationError(`migration ${failed} failed: ${error instanceof Error ? error.message : String(error)}`);
  }
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/** The newest core migration name, reported as the schema version. */
export function latestSchemaVersion(): string {
  return Object.keys(migrations).sort().at(-1) ?? 'none';
}
