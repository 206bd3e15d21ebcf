// Outbound webhooks (DESIGN 15), measured on the built code (`npm run build` first):
//  1. the cost the outbox adds to a grant: a manual tier grant through the one grant path (which writes its
//     tier.granted event in the grant's transaction) with no endpoint, and with one endpoint (one delivery
//     row fanned out in that transaction);
//  2. deliveries per second from one worker to a receiver on 127.0.0.1.
// PGlite in memory, or a scratch PostgreSQL database when DATABASE_URL is set.
//   node bench/webhooks.mjs            BENCH_GRANTS=400 BENCH_DELIVERIES=2000 node bench/webhooks.mjs
import http from 'node:http';
import pg from 'pg';
import { createServices } from '../dist/boot/compose.js';
import { migrateWithPlugins } from '../dist/boot/plugins.js';
import { loadConfig } from '../dist/config.js';
import { openDatabase } from '../dist/db/database.js';
import { MemoryRateLimitStore } from '../dist/http/rate-limit/memory-store.js';
import { systemClock } from '../dist/lib/clock.js';
import { randomHex } from '../dist/lib/crypto.js';
import { recordEvent } from '../dist/outbound/events.js';
import { createEndpoint } from '../dist/outbound/webhooks/endpoints.js';
import { WebhookWorker } from '../dist/outbound/webhooks/worker.js';
import { createTier } from '../dist/tiers/tiers.js';

const GRANTS = Number(process.env.BENCH_GRANTS ?? 300);
const DELIVERIES = Number(process.env.BENCH_DELIVERIES ?? 1000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

let drop = async () => {};
let url = process.env.DATABASE_URL;
if (url) {
  const name = `gh_bench_wh_${randomHex(4)}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`create database ${name}`);
  const u = new URL(url);
  u.pathname = `/${name}`;
  url = u.toString();
  drop = async () => {
    await admin.query(`drop database if exists ${name} with (force)`);
    await admin.end();
  };
}
const database = await openDatabase(url ? { databaseUrl: url, pgPoolMax: 10 } : {});
await migrateWithPlugins(database.db);
const config = loadConfig({ ...(url ? { DATABASE_URL: url } : {}), DATA_DIR: '/tmp' });
const services = await createServices({ config, database, rateLimitStore: new MemoryRateLimitStore(), readCaches: false });
const { db, settings } = services;
const clock = systemClock;
await settings.set('webhook_allow_private_targets', true);
const tierId = await createTier({ db, clock, registry: services.tiers.registry, createdBy: null }, { sbt_name: 'benchgold', sbt_display_name: 'Gold', sbt_tier_level: 10, sbt_features: {}, sbt_is_active: true });

const users = [];
// Members without a password (a hash per member would dominate the setup).
const made = await db
  .insertInto('usr_users')
  .values(Array.from({ length: GRANTS * 2 * ROUNDS }, (_, i) => ({ usr_email: `b${i}-${randomHex(3)}@example.com`, usr_first_name: 'B', usr_is_activated: true, usr_create_time: clock.now(), usr_update_time: clock.now() })))
  .returning('usr_user_id')
  .execute();
for (const u of made) users.push(Number(u.usr_user_id));
let next = 0;

async function grants() {
  const started = performance.now();
  for (let i = 0; i < GRANTS; i++) {
    const userId = users[next++];
    await db.transaction().execute(async (trx) => {
      await services.tiers.membership.within(trx).assignManually(userId, tierId, null);
    });
  }
  return GRANTS / ((performance.now() - started) / 1000);
}

const receiver = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => res.end('ok'));
});
await new Promise((r) => receiver.listen(0, '127.0.0.1', r));
const target = `http://127.0.0.1:${receiver.address().port}/hook`;

const kind = url ? 'PostgreSQL' : 'PGlite';
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const noEndpoint = [];
const oneEndpoint = [];
for (let r = 0; r < ROUNDS; r++) {
  await db.deleteFrom('whe_webhook_endpoints').execute();
  noEndpoint.push(await grants());
  const { endpoint } = await createEndpoint({ db, clock, settings }, { url: target });
  oneEndpoint.push(await grants());
  await db.deleteFrom('whe_webhook_endpoints').where('whe_webhook_endpoint_id', '=', endpoint.endpoint_id).execute();
}
const n = median(noEndpoint);
const o = median(oneEndpoint);
console.log(`${kind}: grants/s (each writing its tier.granted event) with no endpoint ${n.toFixed(0)}, with one endpoint ${o.toFixed(0)}: a delivery costs x${(n / o).toFixed(2)} the time; median of ${ROUNDS} rounds of ${GRANTS}`);

await createEndpoint({ db, clock, settings }, { url: target });
for (const batchSize of [20, 50]) {
  await db.deleteFrom('whd_webhook_deliveries').execute();
  const writeStart = performance.now();
  for (let i = 0; i < DELIVERIES; i++) await db.transaction().execute((trx) => recordEvent(trx, clock, 'order.paid', { order_id: i, user_id: 1 }));
  const written = DELIVERIES / ((performance.now() - writeStart) / 1000);
  const worker = new WebhookWorker({ db, clock, settings, batchSize });
  const started = performance.now();
  let sent = 0;
  while (sent < DELIVERIES) {
    const rep = await worker.runDueDeliveries(1000);
    if (rep.claimed === 0) break;
    sent += rep.succeeded;
  }
  const secs = (performance.now() - started) / 1000;
  console.log(`${kind}: ${written.toFixed(0)} events/s written with one endpoint; ${sent} delivered in ${secs.toFixed(2)} s = ${(sent / secs).toFixed(0)} deliveries/s (one worker, batches of ${batchSize})`);
}
receiver.close();
await services.close();
await database.close();
await drop();
