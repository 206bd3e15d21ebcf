#!/usr/bin/env node
// One benchmark target per process, listening on 127.0.0.1 on a free port. It prints one JSON line
// ({"port": N, ...}) once it is ready, then serves until SIGTERM.
//
//   node bench/server.mjs gatehouse   the real app from dist/, with a user, a machine key and generous limits
//   node bench/server.mjs bare        baseline: bare Fastify answering a constant JSON object
//   node bench/server.mjs select      baseline: bare Fastify doing one primary-key SELECT per request
//
// Database: DATABASE_URL when set (run.mjs points it at a scratch database), else PGlite in BENCH_DATA_DIR.
// BENCH_CPU_PROFILE=file: profile the CPU from the moment the server is ready until it stops, and write a
// .cpuprofile there (open it in Chrome DevTools or speedscope).
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import Fastify from 'fastify';
import { sql } from 'kysely';
import { createMachineKey } from '../dist/accounts/api-keys.js';
import { createUser } from '../dist/accounts/users.js';
import { loadConfig } from '../dist/config.js';
import { openDatabase } from '../dist/db/database.js';
import { migrateToLatest } from '../dist/db/migrate.js';
import { buildApp } from '../dist/http/app.js';
import { createServices } from '../dist/services.js';

const mode = process.argv[2];
const host = '127.0.0.1';

function databaseOptions(config) {
  if (config.databaseUrl) return { databaseUrl: config.databaseUrl, pgPoolMax: config.pgPoolMax };
  if (!process.env.BENCH_DATA_DIR) throw new Error('BENCH_DATA_DIR is required without DATABASE_URL');
  return { dataDir: process.env.BENCH_DATA_DIR };
}

async function gatehouse() {
  const config = { ...loadConfig(process.env), host, port: 0 };
  const database = await openDatabase(databaseOptions(config));
  await migrateToLatest(database.db);
  const services = await createServices({ config, database });
  await services.settings.set('api_require_https', false);
  await services.settings.set('api_rate_limit_requests', 1_000_000_000);
  await services.settings.set('api_auth_rate_limit_requests', 1_000_000_000);
  const email = 'bench@example.com';
  const password = 'bench-password-1';
  const now = new Date();
  const userId = await createUser(database.db, { email, password, permission: 0, firstName: 'Bench', now });
  const key = await createMachineKey(database.db, { userId, permission: 4, now });
  // Posts for the CRUD read scenarios: published, ungated, with a realistic body.
  await sql`insert into pst_posts (pst_usr_user_id, pst_title, pst_body, pst_is_published, pst_published_time, pst_create_time, pst_update_time)
    select ${userId}, 'Post ' || g, repeat('Lorem ipsum dolor sit amet. ', 40), true, now(), now(), now() from generate_series(1, 30) g`.execute(database.db);
  services.requestLog.start();
  const app = await buildApp(services, { logger: false });
  await app.listen({ host, port: 0 });
  const close = async () => {
    await app.close();
    await services.close();
    await database.close();
  };
  return { app, close, info: { email, password, user_id: userId, public_key: key.publicKey, secret_key: key.secretKey } };
}

async function bare() {
  const app = Fastify({ logger: false });
  app.get('/hello', async () => ({ api_version: '1.0', success_message: '', data: { hello: 'world' } }));
  await app.listen({ host, port: 0 });
  return { app, close: () => app.close(), info: {} };
}

async function select() {
  const config = loadConfig(process.env);
  const database = await openDatabase(databaseOptions(config));
  const db = database.db;
  await sql`create table if not exists bench_items (id int4 primary key, name text not null, created timestamp not null)`.execute(db);
  await sql`insert into bench_items select g, 'item ' || g, now() from generate_series(1, 1000) g on conflict do nothing`.execute(db);
  const app = Fastify({ logger: false });
  app.get('/item/:id', async (request, reply) => {
    const row = await db.selectFrom('bench_items').selectAll().where('id', '=', Number(request.params.id)).executeTakeFirst();
    if (!row) return reply.code(404).send({ error: 'not found' });
    return { api_version: '1.0', success_message: '', data: row };
  });
  await app.listen({ host, port: 0 });
  const close = async () => {
    await app.close();
    await database.close();
  };
  return { app, close, info: {} };
}

const targets = { gatehouse, bare, select };
if (!targets[mode]) {
  console.error(`usage: node bench/server.mjs ${Object.keys(targets).join('|')}`);
  process.exit(2);
}
const { app, close: closeTarget, info } = await targets[mode]();
const profileFile = process.env.BENCH_CPU_PROFILE;
let profiler;
if (profileFile) {
  profiler = new Session();
  profiler.connect();
  await profiler.post('Profiler.enable');
  await profiler.post('Profiler.start');
}
const close = async () => {
  if (profiler) {
    const { profile } = await profiler.post('Profiler.stop');
    writeFileSync(profileFile, JSON.stringify(profile));
  }
  await closeTarget();
};
process.stdout.write(`${JSON.stringify({ mode, port: app.server.address().port, ...info })}\n`);

let closing = false;
for (const signal of ['SIGTERM', 'SIGINT']) {
  process.on(signal, () => {
    if (closing) return;
    closing = true;
    close().then(
      () => process.exit(0),
      (e) => {
        console.error(e);
        process.exit(1);
      },
    );
  });
}
