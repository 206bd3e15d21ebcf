import { sql } from 'kysely';
import { latestSchemaVersion } from '../../../db/migrate.js';
import { migrations } from '../../../db/migrations/index.js';
import { serviceVersion } from '../../../version.js';
import { defineManagementHandler } from '../define.js';

export default defineManagementHandler({
  method: 'GET',
  path: 'version',
  description: 'System version, schema version (code and applied migrations) and per-plugin versions',
  async handle(_req, { services }) {
    // Kysely's Migrator records applied migrations in kysely_migration; absent until the first migrate.
    const applied = await sql<{ name: string }>`select name from kysely_migration order by name`
      .execute(services.db)
      .then((r) => r.rows.map((row) => row.name))
      .catch(() => [] as string[]);
    const known = Object.keys(migrations).sort();
    return {
      version: serviceVersion(),
      node_version: process.version,
      schema_version: latestSchemaVersion(),
      // The core's schema: plugin migrations (plugin_{name}_...) sort after every core name.
      schema_applied: applied.filter((name) => known.includes(name)).at(-1) ?? null,
      schema_pending: known.filter((name) => !applied.includes(name)),
      plugins: services.plugins.list().map((p) => ({ name: p.name, version: p.version, active: p.active })),
    };
  },
});
