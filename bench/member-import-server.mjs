#!/usr/bin/env node
// The server side of bench/member-import.mjs: the real app from dist/ on PGlite in BENCH_DATA_DIR, with its
// scheduler running (the member_import task picks up a queued import within 5 s), Drive on (the upload
// endpoints carry the CSV), a staff user with a machine key, two tiers the generated rows name, limits out
// of the way. Prints one JSON line ({"port", "pid", "headers"}) once it listens, then serves until SIGTERM.
import { createMachineKey } from '../dist/accounts/api-keys.js';
import { createUser } from '../dist/accounts/users.js';
import { loadConfig } from '../dist/config.js';
import { openDatabase } from '../dist/db/database.js';
import { migrateWithPlugins } from '../dist/boot/plugins.js';
import { buildApp } from '../dist/boot/app.js';
import { createServices } from '../dist/boot/compose.js';
import { createTier } from '../dist/tiers/tiers.js';
import { writeSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';

const host = '127.0.0.1';
const dataDir = process.env.BENCH_DATA_DIR;
if (!dataDir) throw new Error('BENCH_DATA_DIR is required');
const config = { ...loadConfig({ ...process.env, DATA_DIR: dataDir, DATABASE_URL: '' }), host, port: 0 };
await mkdir(`${dataDir}/db`, { recursive: true });
const database = await openDatabase({ dataDir: `${dataDir}/db` });
// BENCH_QUERIES=1: every statement's count and total time, printed to stderr when the server stops.
const queryStats = new Map();
if (process.env.BENCH_QUERIES) {
  const query = database.pglite.query.bind(database.pglite);
  database.pglite.query = async (text, ...rest) => {
    const start = process.hrtime.bigint();
    try {
      return await query(text, ...rest);
    } finally {
      const stat = queryStats.get(text) ?? { count: 0, ms: 0 };
      stat.count++;
      stat.ms += Number(process.hrtime.bigint() - start) / 1e6;
      queryStats.set(text, stat);
    }
  };
}
await migrateWithPlugins(database.db);
const services = await createServices({ config, database });
for (const [name, value] of Object.entries({
  api_require_https: false,
  drive_active: true,
  drive_upload_chunk_bytes: 8 * 1024 * 1024,
  api_rate_limit_requests: 1_000_000_000,
  api_upload_rate_limit_requests: 1_000_000_000,
})) await services.settings.set(name, value);
const now = new Date();
const userId = await createUser(database.db, { email: 'staff@example.com', password: 'bench-password-1', permission: 5, firstName: 'Staff', now });
const key = await createMachineKey(database.db, { userId, permission: 4, now });
const ctx = { db: database.db, clock: services.clock, registry: services.tiers.registry, createdBy: null };
await createTier(ctx, { sbt_name: 'silver', sbt_display_name: 'Silver', sbt_tier_level: 10, sbt_is_active: true });
await createTier(ctx, { sbt_name: 'gold', sbt_display_name: 'Gold Tier', sbt_tier_level: 20, sbt_is_active: true });
services.requestLog.start();
services.scheduler.start();
const app = await buildApp(services, { logger: false });
await app.listen({ host, port: 0 });
process.stdout.write(`${JSON.stringify({ port: app.server.address().port, pid: process.pid, headers: { public_key: key.publicKey, secret_key: key.secretKey } })}\n`);
process.once('SIGTERM', async () => {
  for (const [text, stat] of [...queryStats].filter(([, s]) => s.count > 2).sort((a, b) => b[1].ms - a[1].ms).slice(0, 15)) {
    writeSync(2, `${String(stat.count).padStart(6)} ${stat.ms.toFixed(0).padStart(7)} ms  ${text.replace(/\s+/g, ' ').slice(0, 150)}\n`);
  }
  await services.scheduler.stop();
  await app.close();
  await services.close();
  await database.close();
  process.exit(0);
});
