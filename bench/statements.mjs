#!/usr/bin/env node
// Where a request's database time goes: the real app from dist/ (in process, `inject`, no socket) on a
// scratch PGlite data directory, with the bench's data, runs each kind of request BENCH_REPEAT times (20)
// after a warm-up and prints, per request, its exchanges with the database (count and milliseconds per
// request; an exchange names every statement it carried, joined by ' + ': a transaction's BEGIN and
// deferred writes go with the next statement). BENCH_TEXT: how much of each text to print (140).
//   npm run build && node bench/statements.mjs [name regex]
import { createHmac, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { createMachineKey } from '../dist/accounts/api-keys.js';
import { createUser } from '../dist/accounts/users.js';
import { loadConfig } from '../dist/config.js';
import { openDatabase } from '../dist/db/database.js';
import { migrateWithPlugins } from '../dist/boot/plugins.js';
import { buildApp } from '../dist/boot/app.js';
import { createServices } from '../dist/boot/compose.js';
import { createTier } from '../dist/tiers/tiers.js';
import { openStoreSettings, startFakeCardProcessor } from './fake-card-processor.mjs';

const REPEAT = Number(process.env.BENCH_REPEAT ?? 20);
const only = process.argv[2] ? new RegExp(process.argv[2], 'i') : null;
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'gh-statements-'));
const database = process.env.DATABASE_URL ? await openDatabase({ databaseUrl: process.env.DATABASE_URL, pgPoolMax: 10 }) : await openDatabase({ dataDir });
let trace = null;
if (database.pglite) {
  // Statements reach PGlite as one protocol message each (src/db/pglite-statements.ts: Parse the first
  // time under a name, then Bind to that name), a bulk load through its `query`.
  const textOfName = new Map();
  const cstring = (buf, at) => {
    const end = buf.indexOf(0, at);
    return [Buffer.from(buf.subarray(at, end)).toString(), end + 1];
  };
  // An exchange may carry more than one statement (a transaction's BEGIN goes with its first statement):
  // its texts, in order, joined by ' + '.
  const statementText = (message) => {
    const texts = [];
    for (let at = 0; at < message.length; ) {
      const type = String.fromCharCode(message[at]);
      const length = Buffer.from(message.buffer, message.byteOffset + at + 1, 4).readInt32BE(0);
      if (type === 'P') {
        const [name, next] = cstring(message, at + 5);
        textOfName.set(name, cstring(message, next)[0]);
      } else if (type === 'B') {
        const [, next] = cstring(message, at + 5);
        const text = textOfName.get(cstring(message, next)[0]);
        if (text !== undefined) texts.push(text);
      }
      at += 1 + length;
    }
    return texts.length > 0 ? texts.join(' + ') : null;
  };
  const wrap = (method, textOf) => {
    const original = database.pglite[method].bind(database.pglite);
    database.pglite[method] = async (first, ...rest) => {
      const start = performance.now();
      try {
        return await original(first, ...rest);
      } finally {
        const text = textOf(first);
        if (text !== null) trace?.push({ text: text.replace(/\s+/g, ' ').slice(0, Number(process.env.BENCH_TEXT ?? 140)), ms: performance.now() - start });
      }
    };
  };
  wrap('query', (text) => text);
  wrap('execProtocolStream', statementText);
}
await migrateWithPlugins(database.db);
const config = { ...loadConfig({ DATA_DIR: dataDir, DATABASE_URL: process.env.DATABASE_URL ?? '' }), host: '127.0.0.1', port: 0 };
const services = await createServices({ config, database });
const db = database.db;
const SECRET = 'whsec_bench';
const cardProcessor = await startFakeCardProcessor({ priceId: 'price_bench' });
for (const [k, v] of Object.entries({ api_require_https: false, api_rate_limit_requests: 1e9, api_auth_rate_limit_requests: 1e9, api_session_rate_limit_requests: 1e9, ...openStoreSettings(cardProcessor.base, SECRET) })) await services.settings.set(k, v);
const now = new Date();
const userId = await createUser(db, { email: 'bench@example.com', password: 'bench-password-1', permission: 0, firstName: 'Bench', now });
const staffId = await createUser(db, { email: 'staff@example.com', password: 'bench-password-2', permission: 5, firstName: 'Staff', now });
const staffKey = await createMachineKey(db, { userId: staffId, permission: 4, now });
await sql`insert into pst_posts (pst_usr_user_id, pst_title, pst_body, pst_is_published, pst_published_time, pst_create_time, pst_update_time)
  select ${userId}, 'Post ' || g, repeat('Lorem ipsum dolor sit amet. ', 40), true, now(), now(), now() from generate_series(1, 50) g`.execute(db);
const tierId = await createTier({ db, clock: services.clock, registry: services.tiers.registry, createdBy: null }, { sbt_name: 'benchpaid', sbt_display_name: 'Paid', sbt_tier_level: 20, sbt_features: {}, sbt_is_active: true });
const product = await db.insertInto('pro_products').values({ pro_name: 'Bench', pro_link: 'bench', pro_is_active: true, pro_sbt_subscription_tier_id: tierId, pro_price: 1500, pro_card_price_id: 'price_bench' }).returning('pro_product_id').executeTakeFirstOrThrow();
const buyers = await sql`insert into usr_users (usr_email, usr_first_name, usr_permission, usr_is_activated, usr_create_time, usr_update_time)
  select 'buyer' || g || '@example.com', 'Buyer', 0, true, now(), now() from generate_series(1, ${REPEAT * 3}) g returning usr_user_id`.execute(db);
const buyerIds = buyers.rows.map((r) => Number(r.usr_user_id));
services.requestLog.start();
const app = await buildApp(services, { logger: false });
await app.ready();
const login = await app.inject({ method: 'POST', url: '/api/v1/auth/login', headers: { 'content-type': 'application/json' }, payload: { email: 'bench@example.com', password: 'bench-password-1', device_label: 'bench' } });
const session = { public_key: login.json().data.public_key, secret_key: login.json().data.secret_key };
const staff = { public_key: staffKey.publicKey, secret_key: staffKey.secretKey };

let n = 0;
function purchase() {
  const uid = buyerIds[n++];
  const ref = `sub_bench_${uid}`;
  const created = Math.floor(Date.now() / 1000);
  const body = JSON.stringify({ id: `evt_bench_${uid}`, object: 'event', type: 'checkout.session.completed', created, api_version: '2024-06-20', livemode: false,
    data: { object: { id: `cs_${ref}`, object: 'checkout.session', mode: 'subscription', subscription: ref, payment_intent: null, payment_status: 'paid', status: 'complete', amount_total: 1500, currency: 'usd', metadata: { user_id: String(uid), product_id: String(product.pro_product_id) } } } });
  const sig = createHmac('sha256', SECRET).update(`${created}.${body}`).digest('hex');
  return { method: 'POST', url: '/api/v1/webhooks/card_processor', headers: { 'content-type': 'application/json', 'stripe-signature': `t=${created},v1=${sig}` }, payload: body };
}
const edit = (i, extra = {}) => ({ method: 'POST', url: '/api/v1/action/account_edit', headers: { ...session, 'content-type': 'application/json', ...extra }, payload: { usr_first_name: `Bench ${i}`, usr_email: 'bench@example.com' } });
const kinds = {
  'GET Post/1 (session key)': () => ({ method: 'GET', url: '/api/v1/Post/1', headers: session }),
  'GET auth/session (session key)': () => ({ method: 'GET', url: '/api/v1/auth/session', headers: session }),
  'GET Posts, new filter value': (i) => ({ method: 'GET', url: `/api/v1/Posts?numperpage=20&max_visible_tier_level=${1000 + i}`, headers: session }),
  'POST /Post (staff machine key)': (i) => ({ method: 'POST', url: '/api/v1/Post', headers: { ...staff, 'content-type': 'application/x-www-form-urlencoded' }, payload: `pst_is_published=1&pst_title=Bench+${i}&pst_body=Lorem+ipsum` }),
  'account_edit (session key)': (i) => edit(i),
  'account_edit + Idempotency-Key': (i) => edit(i + 50_000, { 'idempotency-key': randomUUID() }),
  'purchase webhook': () => purchase(),
};
for (const [name, make] of Object.entries(kinds)) {
  if (only && !only.test(name)) continue;
  for (let i = 0; i < 3; i++) {
    const r = await app.inject(make(i));
    if (r.statusCode !== 200) throw new Error(`${name}: ${r.statusCode} ${r.body.slice(0, 300)}`);
  }
  await services.requestLog.flush();
  trace = [];
  const started = performance.now();
  for (let i = 3; i < REPEAT + 3; i++) await app.inject(make(i));
  const wall = (performance.now() - started) / REPEAT;
  const statements = trace;
  trace = null;
  const byText = new Map();
  for (const s of statements) {
    const e = byText.get(s.text) ?? { count: 0, ms: 0 };
    e.count++;
    e.ms += s.ms;
    byText.set(s.text, e);
  }
  const dbMs = statements.reduce((t, s) => t + s.ms, 0) / REPEAT;
  console.log(`\n${name}: ${(statements.length / REPEAT).toFixed(1)} exchanges, ${dbMs.toFixed(2)} ms in the database, ${wall.toFixed(2)} ms in all, per request`);
  for (const [text, e] of [...byText].sort((a, b) => b[1].ms - a[1].ms)) console.log(`  ${(e.count / REPEAT).toFixed(1).padStart(5)} × ${(e.ms / REPEAT).toFixed(2).padStart(6)} ms  ${text}`);
}
if (cardProcessor.unexpected().length > 0) console.log(`\nthe card processor was asked what the fake does not answer: ${cardProcessor.unexpected().join(', ')}`);
await cardProcessor.close();
await app.close();
await services.close();
await database.close();
rmSync(dataDir, { recursive: true, force: true });
