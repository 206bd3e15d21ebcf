#!/usr/bin/env node
// One benchmark target per process, listening on 127.0.0.1 on a free port. It prints one JSON line
// ({"port": N, ...}) once it is ready, then serves until SIGTERM.
//
//   node bench/server.mjs gatehouse   the real server from dist/ (startServer), with a member, a machine key,
//                                     a tier, posts and generous limits (BENCH_MEMBERS more members)
//   node bench/server.mjs writer      the same server for the write scenarios, in its own database (its rows
//                                     never reach the reads): also a staff member with a machine key, the
//                                     store switched on with a product granting a tier, and BENCH_BUYERS
//                                     members for the purchase webhooks (one per request)
//   node bench/server.mjs bare        baseline: bare Fastify answering a constant JSON object
//   node bench/server.mjs select      baselines: bare Fastify doing one primary-key SELECT per request
//                                     (GET /item/:id), or one INSERT (POST /item, a JSON body)
//
// Database: DATABASE_URL when set (run.mjs points it at a scratch database), else PGlite in BENCH_DATA_DIR;
// the real server's data directory (logs, initial-admin.json) is BENCH_DATA_DIR either way.
// BENCH_CPU_PROFILE=file: profile the CPU from the moment the server is ready until it stops, and write a
// .cpuprofile there (open it in Chrome DevTools or speedscope).
import { writeFileSync } from 'node:fs';
import http from 'node:http';
import { Session } from 'node:inspector/promises';
import Fastify from 'fastify';
import { sql } from 'kysely';
import { createMachineKey, createSessionKey } from '../dist/accounts/api-keys.js';
import { createUser } from '../dist/accounts/users.js';
import { loadConfig } from '../dist/config.js';
import { openDatabase } from '../dist/db/database.js';
import { startServer } from '../dist/boot/server.js';
import { createTier } from '../dist/tiers/tiers.js';
import { systemClock } from '../dist/lib/clock.js';
import { openStoreSettings, startFakeCardProcessor } from './fake-card-processor.mjs';

const mode = process.argv[2];
const host = '127.0.0.1';

function databaseOptions(config) {
  if (config.databaseUrl) return { databaseUrl: config.databaseUrl, pgPoolMax: config.pgPoolMax };
  if (!process.env.BENCH_DATA_DIR) throw new Error('BENCH_DATA_DIR is required without DATABASE_URL');
  return { dataDir: process.env.BENCH_DATA_DIR };
}

/** The card processor's webhook signing secret in the writer server (bench/load.mjs signs with it). */
export const CARD_WEBHOOK_SECRET = 'whsec_bench';

/**
 * The server as `npm start` runs it (startServer: first start creating the embedded database, socket
 * server, scheduler, settings reload, request log), on a free port, with the log at warn (BENCH_LOG_LEVEL).
 * Data: a tierless member (permission 0, no tier) with a machine key, one tier of level 1, BENCH_POSTS
 * published posts (50) and one more gated to the tier, and BENCH_MEMBERS more members (0).
 * `writer`: also a staff member (permission 5) with a machine key, the store on with a product that grants
 * a tier, and BENCH_BUYERS members (ids in one range) for the purchase webhooks.
 */
async function gatehouse(role = 'reader') {
  if (!process.env.DATABASE_URL && !process.env.BENCH_DATA_DIR) throw new Error('BENCH_DATA_DIR is required without DATABASE_URL');
  // Started at npm start's level (info), so that its console can carry every line; the level it serves at
  // is BENCH_LOG_LEVEL (warn), and the bench switches it per scenario through the control port (below).
  const level = process.env.BENCH_LOG_LEVEL ?? 'warn';
  const env = { ...process.env, LOG_LEVEL: 'info', ...(process.env.BENCH_DATA_DIR ? { DATA_DIR: process.env.BENCH_DATA_DIR } : {}) };
  const config = { ...loadConfig(env), host, port: 0 };
  const startedAt = performance.now();
  const server = await startServer(config);
  const startMs = performance.now() - startedAt;
  const { services } = server;
  const db = services.db;
  const seededAt = performance.now();
  await services.settings.set('api_require_https', false);
  for (const name of ['api_rate_limit_requests', 'api_auth_rate_limit_requests', 'api_session_rate_limit_requests']) await services.settings.set(name, 1_000_000_000);
  const email = 'bench@example.com';
  const password = 'bench-password-1';
  const now = new Date();
  const userId = await createUser(db, { email, password, permission: 0, firstName: 'Bench', now });
  const key = await createMachineKey(db, { userId, permission: 4, now });
  const posts = Number(process.env.BENCH_POSTS ?? 50);
  // Posts for the CRUD read scenarios: published, ungated, with a realistic body; post 1 is the public one.
  // In batches (one statement for 100,000 rows grew the embedded database's memory for good). Each is
  // marked as announced (post.published written long ago), as on a site that grew to this size: else the
  // publication task would spend the run writing an event for every one of them.
  for (let from = 1; from <= posts; from += SEED_BATCH) {
    const to = Math.min(posts, from + SEED_BATCH - 1);
    await sql`with made as (
        insert into pst_posts (pst_usr_user_id, pst_title, pst_body, pst_is_published, pst_published_time, pst_create_time, pst_update_time)
        select ${userId}, 'Post ' || g, repeat('Lorem ipsum dolor sit amet. ', 40), true, now(), now(), now() from generate_series(${from}::int, ${to}::int) g
        returning pst_post_id, pst_published_time)
      insert into ppe_post_publication_events (ppe_pst_post_id, ppe_published_time, ppe_create_time) select pst_post_id, pst_published_time, now() from made`.execute(db);
  }
  const group = await sql`insert into grp_groups (grp_name, grp_category) values ('Supporters', 'subscription_tier') returning grp_group_id`.execute(db);
  await sql`insert into sbt_subscription_tiers (sbt_grp_group_id, sbt_tier_level, sbt_name, sbt_display_name) values (${group.rows[0].grp_group_id}, 1, 'supporters', 'Supporters')`.execute(db);
  const gated = await sql`insert into pst_posts (pst_usr_user_id, pst_title, pst_body, pst_is_published, pst_published_time, pst_tier_min_level, pst_create_time, pst_update_time)
    values (${userId}, 'Gated post', ${'Lorem ipsum dolor sit amet. '.repeat(40)}, true, now(), 1, now(), now()) returning pst_post_id`.execute(db);
  const members = Number(process.env.BENCH_MEMBERS ?? 0);
  if (members > 0) await insertMembers(db, 'member', members);
  const info = { email, password, user_id: userId, public_key: key.publicKey, secret_key: key.secretKey, gated_post_id: Number(gated.rows[0].pst_post_id), posts, members };
  const cardProcessor = role === 'writer' ? await startFakeCardProcessor({ priceId: 'price_bench' }) : null;
  if (cardProcessor) Object.assign(info, await writerData(services, now, cardProcessor.base));
  // PostgreSQL: the planner's statistics after the bulk inserts, as autovacuum would have them on a live
  // site. The embedded database runs no autovacuum, so it is left as a PGlite site would be.
  if (process.env.DATABASE_URL) await sql`analyze`.execute(db);
  info.seed_ms = Math.round(performance.now() - seededAt);
  server.app.log.level = level;
  info.control_port = await controlPort(server.app);
  info.start_ms = Math.round(startMs);
  return {
    app: server.app,
    close: async () => {
      if (!(await server.close())) throw new Error('the server did not stop cleanly');
      await cardProcessor?.close();
      const unexpected = cardProcessor?.unexpected() ?? [];
      if (unexpected.length > 0) throw new Error(`the card processor was asked what the bench's fake does not answer: ${[...new Set(unexpected)].join(', ')}`);
    },
    info,
  };
}

/**
 * A second port for the bench alone: `PUT /log-level/<level>` sets the level the server logs at (its
 * console stream takes every line from info up; the logger's own level decides what is written), so one
 * server is measured at warn and at info in the same round.
 */
async function controlPort(app) {
  const control = http.createServer((req, res) => {
    const m = /^\/log-level\/(\w+)$/.exec(req.url ?? '');
    if (req.method !== 'PUT' || !m || !['trace', 'debug', 'info', 'warn', 'error'].includes(m[1])) {
      res.statusCode = 404;
      return res.end();
    }
    app.log.level = m[1];
    res.end(app.log.level);
  });
  control.unref();
  await new Promise((resolve) => control.listen(0, host, resolve));
  return control.address().port;
}

/** Rows per seeding statement. */
const SEED_BATCH = 10_000;

/** `count` members without a password (as an import makes them), in batches; their ids, lowest and highest. */
async function insertMembers(db, prefix, count) {
  let first = Infinity;
  let last = -Infinity;
  for (let from = 1; from <= count; from += SEED_BATCH) {
    const to = Math.min(count, from + SEED_BATCH - 1);
    const r = await sql`with made as (
        insert into usr_users (usr_email, usr_first_name, usr_last_name, usr_permission, usr_is_activated, usr_create_time, usr_update_time)
        select ${prefix} || g || '@example.com', 'Member', 'No. ' || g, 0, true, now(), now() from generate_series(${from}::int, ${to}::int) g
        returning usr_user_id)
      select min(usr_user_id) as first, max(usr_user_id) as last from made`.execute(db);
    first = Math.min(first, Number(r.rows[0].first));
    last = Math.max(last, Number(r.rows[0].last));
  }
  if (last - first + 1 !== count) throw new Error(`${prefix} ids are not one range (${first} to ${last} for ${count})`);
  return { first, last };
}

/**
 * The writer's extra data: a staff member with a machine key, the store (open: its switches on and the
 * card processor configured, its API the bench's fake at `cardProcessorBase`) and a product, the buyers.
 */
async function writerData(services, now, cardProcessorBase) {
  const db = services.db;
  for (const [k, v] of Object.entries(openStoreSettings(cardProcessorBase, CARD_WEBHOOK_SECRET))) await services.settings.set(k, v);
  const staffId = await createUser(db, { email: 'staff@example.com', password: 'bench-password-2', permission: 5, firstName: 'Staff', now });
  const staffKey = await createMachineKey(db, { userId: staffId, permission: 4, now });
  const ctx = { db, clock: systemClock, registry: services.tiers.registry, createdBy: null };
  const tierId = await createTier(ctx, { sbt_name: 'benchpaid', sbt_display_name: 'Paid', sbt_tier_level: 20, sbt_features: {}, sbt_is_active: true });
  const product = await db.insertInto('pro_products').values({ pro_name: 'Bench', pro_link: 'bench', pro_is_active: true, pro_sbt_subscription_tier_id: tierId, pro_price: 1500, pro_card_price_id: 'price_bench' }).returning('pro_product_id').executeTakeFirstOrThrow();
  const buyers = await insertMembers(db, 'buyer', Number(process.env.BENCH_BUYERS ?? 20000));
  return { staff_public_key: staffKey.publicKey, staff_secret_key: staffKey.secretKey, product_id: Number(product.pro_product_id), buyers, editors: await editorKeys(db, now) };
}

/** Members who edit their own accounts in the write scenarios, each request the next one. */
const EDITORS = 200;

/**
 * EDITORS members, each with a session key (as a login issues it) and the email account_edit sends back:
 * one member editing their own row 50 times at once would measure PostgreSQL's row lock, not the server.
 */
async function editorKeys(db, now) {
  const { first, last } = await insertMembers(db, 'editor', EDITORS);
  const rows = await db.selectFrom('usr_users').select(['usr_user_id', 'usr_email']).where('usr_user_id', '>=', first).where('usr_user_id', '<=', last).orderBy('usr_user_id').execute();
  const expiresTime = new Date(now.getTime() + 365 * 86_400_000);
  const editors = [];
  for (const row of rows) {
    const key = await createSessionKey(db, { userId: row.usr_user_id, name: 'bench', now, expiresTime });
    editors.push({ public_key: key.publicKey, secret_key: key.secretKey, email: row.usr_email });
  }
  return editors;
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
  await sql`create table if not exists bench_writes (id serial primary key, name text not null, created timestamp not null)`.execute(db);
  const app = Fastify({ logger: false });
  app.get('/item/:id', async (request, reply) => {
    const row = await db.selectFrom('bench_items').selectAll().where('id', '=', Number(request.params.id)).executeTakeFirst();
    if (!row) return reply.code(404).send({ error: 'not found' });
    return { api_version: '1.0', success_message: '', data: row };
  });
  // The write baseline: one INSERT of the JSON body's name, answering the new row.
  app.post('/item', async (request) => {
    const row = await db.insertInto('bench_writes').values({ name: String(request.body?.name ?? ''), created: new Date() }).returning(['id', 'name', 'created']).executeTakeFirstOrThrow();
    return { api_version: '1.0', success_message: '', data: row };
  });
  await app.listen({ host, port: 0 });
  const close = async () => {
    await app.close();
    await database.close();
  };
  return { app, close, info: {} };
}

const targets = { gatehouse: () => gatehouse('reader'), writer: () => gatehouse('writer'), bare, select };
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
