#!/usr/bin/env node
// One benchmark target per process, listening on 127.0.0.1 on a free port. It prints one JSON line
// ({"port": N, ...}) once it is ready, then serves until SIGTERM.
//
//   node bench/server.mjs gatehouse   the real server from dist/ (startServer), with a member, a machine key,
//                                     a tier, posts and generous limits
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
import { startServer } from '../dist/boot/server.js';

const mode = process.argv[2];
const host = '127.0.0.1';

function databaseOptions(config) {
  if (config.databaseUrl) return { databaseUrl: config.databaseUrl, pgPoolMax: config.pgPoolMax };
  if (!process.env.BENCH_DATA_DIR) throw new Error('BENCH_DATA_DIR is required without DATABASE_URL');
  return { dataDir: process.env.BENCH_DATA_DIR };
}

/**
 * The server as `npm start` runs it (startServer: first start creating the embedded database, socket
 * server, scheduler, settings reload, request log), on a free port, with the log at warn (BENCH_LOG_LEVEL).
 * Data: a tierless member (permission 0, no tier) with a machine key, one tier of level 1, BENCH_POSTS
 * published posts (30), and one more gated to the tier.
 */
async function gatehouse() {
  if (!process.env.DATABASE_URL && !process.env.BENCH_DATA_DIR) throw new Error('BENCH_DATA_DIR is required without DATABASE_URL');
  const env = { ...process.env, LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn', ...(process.env.DATABASE_URL ? {} : { DATA_DIR: process.env.BENCH_DATA_DIR }) };
  const config = { ...loadConfig(env), host, port: 0 };
  const server = await startServer(config);
  const { services } = server;
  const db = services.db;
  await services.settings.set('api_require_https', false);
  for (const name of ['api_rate_limit_requests', 'api_auth_rate_limit_requests', 'api_session_rate_limit_requests']) await services.settings.set(name, 1_000_000_000);
  const email = 'bench@example.com';
  const password = 'bench-password-1';
  const now = new Date();
  const userId = await createUser(db, { email, password, permission: 0, firstName: 'Bench', now });
  const key = await createMachineKey(db, { userId, permission: 4, now });
  const posts = Number(process.env.BENCH_POSTS ?? 30);
  // Posts for the CRUD read scenarios: published, ungated, with a realistic body; post 1 is the public one.
  await sql`insert into pst_posts (pst_usr_user_id, pst_title, pst_body, pst_is_published, pst_published_time, pst_create_time, pst_update_time)
    select ${userId}, 'Post ' || g, repeat('Lorem ipsum dolor sit amet. ', 40), true, now(), now(), now() from generate_series(1, ${posts}) g`.execute(db);
  const group = await sql`insert into grp_groups (grp_name, grp_category) values ('Supporters', 'subscription_tier') returning grp_group_id`.execute(db);
  await sql`insert into sbt_subscription_tiers (sbt_grp_group_id, sbt_tier_level, sbt_name, sbt_display_name) values (${group.rows[0].grp_group_id}, 1, 'supporters', 'Supporters')`.execute(db);
  const gated = await sql`insert into pst_posts (pst_usr_user_id, pst_title, pst_body, pst_is_published, pst_published_time, pst_tier_min_level, pst_create_time, pst_update_time)
    values (${userId}, 'Gated post', ${'Lorem ipsum dolor sit amet. '.repeat(40)}, true, now(), 1, now(), now()) returning pst_post_id`.execute(db);
  return {
    app: server.app,
    close: async () => {
      if (!(await server.close())) throw new Error('the server did not stop cleanly');
    },
    info: { email, password, user_id: userId, public_key: key.publicKey, secret_key: key.secretKey, gated_post_id: Number(gated.rows[0].pst_post_id) },
  };
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
process.stdout.write(`${JSON.stringify({ mode, pid: process.pid, port: app.server.address().port, ...info })}\n`);

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
