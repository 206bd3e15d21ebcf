#!/usr/bin/env node
// `npm run bench -- --soak`: the real server (`node dist/main.js`, the node flags of `npm start`) on
// PostgreSQL (a scratch database, dropped after) under a bounded mixed workload — reads, profile writes,
// actions, webhook purchases, Drive uploads — from SOAK_CONNECTIONS concurrent clients for SOAK_DURATION
// seconds (default 300). Every SOAK_SAMPLE seconds it prints throughput, p99 and the server's RSS; at the
// end it checks that RSS after the warm-up (the first SOAK_WARMUP seconds, default a fifth of the run)
// stays within 10% of its first post-warm-up sample (no leak). Exit 1 when it does not, or on any 5xx or
// connection error. Environment: DATABASE_URL (the server's PostgreSQL, default the local one),
// REDIS_URL (passed to the server when set).
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.join(here, '..');
const dist = (p) => path.join(root, 'dist', p);
const env = process.env;
const DURATION = Number(env.SOAK_DURATION ?? 300);
const WARMUP = Number(env.SOAK_WARMUP ?? Math.round(DURATION / 5));
const SAMPLE = Number(env.SOAK_SAMPLE ?? Math.max(2, Math.round(DURATION / 30)));
const CONNECTIONS = Number(env.SOAK_CONNECTIONS ?? 16);
const BASE = env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const WEBHOOK_SECRET = 'whsec_soak';
const NODE_FLAGS = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')).scripts.start.split(/\s+/).filter((w) => w.startsWith('--'));

const freePort = () => new Promise((resolve) => { const s = net.createServer(); s.listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => resolve(port)); }); });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const rssOf = (pid) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) * 1024;
const mib = (b) => (b / 1048576).toFixed(1);

async function main() {
  const name = `gh_soak_${randomBytes(5).toString('hex')}`;
  const admin = new pg.Client({ connectionString: BASE });
  await admin.connect();
  await admin.query(`create database ${name}`);
  const url = new URL(BASE);
  url.pathname = `/${name}`;
  const databaseUrl = url.toString();
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'gh-soak-'));
  const port = await freePort();
  let server;
  try {
    server = spawn(process.execPath, [...NODE_FLAGS, dist('main.js')], {
      env: { PATH: env.PATH, HOME: env.HOME, PORT: String(port), DATA_DIR: dataDir, DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn', ...(env.REDIS_URL ? { REDIS_URL: env.REDIS_URL } : {}) },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    server.stderr.on('data', (d) => (stderr += d));
    // Ready when it answers.
    for (let i = 0; ; i++) {
      if (server.exitCode !== null) throw new Error(`server exited: ${stderr}`);
      const ok = await fetch(`http://127.0.0.1:${port}/api/v1/actions`).then(() => true, () => false);
      if (ok) break;
      if (i > 600) throw new Error('server did not start');
      await sleep(100);
    }
    const fixture = await prepare(databaseUrl);
    await sleep(1500); // the server reloads settings every second
    const report = await soak(`http://127.0.0.1:${port}`, server.pid, fixture);
    return report;
  } finally {
    server?.kill('SIGTERM');
    if (server && server.exitCode === null) await new Promise((r) => server.once('exit', r));
    await admin.query(`drop database if exists ${name} with (force)`);
    await admin.end();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** Settings, a Drive tier, members with machine keys, a product for webhook purchases: through the compiled services. */
async function prepare(databaseUrl) {
  const [{ openDatabase }, { createServices }, { loadConfig }, { MemoryRateLimitStore }, { createUser }, { createMachineKey }, { createTier }, { systemClock }] = await Promise.all([
    import(dist('db/database.js')), import(dist('boot/compose.js')), import(dist('config.js')), import(dist('http/rate-limit/memory-store.js')),
    import(dist('accounts/users.js')), import(dist('accounts/api-keys.js')), import(dist('tiers/tiers.js')), import(dist('lib/clock.js')),
  ]);
  const database = await openDatabase({ databaseUrl, pgPoolMax: 2 });
  const services = await createServices({ config: loadConfig({ DATABASE_URL: databaseUrl }), database, rateLimitStore: new MemoryRateLimitStore(), keyRowCache: false });
  try {
    for (const [k, v] of Object.entries({
      api_require_https: false, drive_active: true, products_active: true, subscriptions_active: true,
      card_processor_webhook_secret: WEBHOOK_SECRET, api_rate_limit_requests: 100_000_000, api_upload_rate_limit_requests: 100_000_000,
    })) await services.settings.set(k, v);
    const now = systemClock.now();
    const ctx = { db: services.db, clock: systemClock, registry: services.tiers.registry, createdBy: null };
    const driveTier = await createTier(ctx, { sbt_name: 'soakdrive', sbt_display_name: 'Soak', sbt_tier_level: 10, sbt_features: { drive_storage_bytes: 100_000_000_000, drive_max_file_bytes: 10_000_000, drive_share_links: true, drive_versioning_depth: 1 }, sbt_is_active: true });
    const paidTier = await createTier(ctx, { sbt_name: 'soakpaid', sbt_display_name: 'Paid', sbt_tier_level: 20, sbt_features: {}, sbt_is_active: true });
    const product = await services.db.insertInto('pro_products').values({ pro_name: 'Soak', pro_link: 'soak', pro_is_active: true, pro_sbt_subscription_tier_id: paidTier, pro_price: 1500, pro_card_price_id: 'price_soak' }).returning('pro_product_id').executeTakeFirstOrThrow();
    const members = [];
    for (let i = 0; i < CONNECTIONS; i++) {
      const email = `soak${i}@example.com`;
      const userId = await createUser(services.db, { email, password: `pw-${randomBytes(6).toString('hex')}`, permission: 0, firstName: 'Soak', lastName: String(i), now });
      const key = await createMachineKey(services.db, { userId, permission: 4, now });
      await services.tiers.membership.assignManually(userId, driveTier, null);
      members.push({ userId, email, headers: { public_key: key.publicKey, secret_key: key.secretKey } });
    }
    return { members, productId: product.pro_product_id };
  } finally {
    await services.close();
    await database.close();
  }
}

/** A Stripe-protocol checkout.session.completed for a member, signed as the card processor signs. */
function purchase(member, productId, n) {
  const ref = `sub_soak_${member.userId}_${n}`;
  const created = Math.floor(Date.now() / 1000);
  const body = JSON.stringify({
    id: `evt_soak_${member.userId}_${n}`, object: 'event', type: 'checkout.session.completed', created, api_version: '2024-06-20', livemode: false,
    data: { object: { id: `cs_${ref}`, object: 'checkout.session', mode: 'subscription', subscription: ref, payment_intent: null, payment_status: 'paid', status: 'complete', amount_total: 1500, currency: 'usd', metadata: { user_id: String(member.userId), product_id: String(productId) } } },
  });
  const sig = createHmac('sha256', WEBHOOK_SECRET).update(`${created}.${body}`).digest('hex');
  return { headers: { 'content-type': 'application/json', 'stripe-signature': `t=${created},v1=${sig}` }, body };
}

async function soak(base, pid, { members, productId }) {
  const latencies = [];
  let done = 0;
  let bad = 0;
  const badSamples = [];
  const request = async (method, p, { headers = {}, json, raw } = {}) => {
    const t0 = performance.now();
    let status = 0;
    let data;
    try {
      const res = await fetch(base + p, { method, headers: json !== undefined ? { ...headers, 'content-type': 'application/json' } : headers, body: json !== undefined ? JSON.stringify(json) : raw });
      status = res.status;
      const text = await res.text();
      try { data = JSON.parse(text); } catch { data = undefined; }
    } catch {
      status = 0;
    }
    latencies.push(performance.now() - t0);
    done++;
    if (status === 0 || status >= 500) {
      bad++;
      if (badSamples.length < 5) badSamples.push(`${method} ${p} -> ${status}`);
    }
    return { status, data };
  };
  const action = (m, name, json) => request('POST', `/api/v1/action/${name}`, { headers: m.headers, json });
  const steps = [
    (m) => request('GET', '/api/v1/auth/session', { headers: m.headers }),
    (m) => action(m, 'drive_list', {}),
    (m, n) => action(m, 'account_edit', { usr_first_name: `Soak${n % 1000}`, usr_email: m.email }),
    async (m, n) => {
      const made = await action(m, 'drive_folder_create', { name: `soak-${n}` });
      const id = made.data?.data?.folder_id;
      if (id) await action(m, 'drive_trash', { folder_id: id });
    },
    (m, n) => { const d = purchase(m, productId, n); return request('POST', '/api/v1/webhooks/card_processor', { headers: d.headers, raw: d.body }); },
    async (m, n) => {
      const bytes = createHash('sha512').update(`${m.userId}:${n % 50}`).digest();
      const body = Buffer.concat(Array.from({ length: 256 }, () => bytes));
      const init = await action(m, 'drive_upload_init', { name: `soak-${n}.bin`, size_bytes: body.length });
      const token = init.data?.data?.upload_token;
      if (!token) return;
      await request('PUT', `/api/v1/drive_upload/${token}`, { headers: { ...m.headers, 'content-type': 'application/octet-stream', 'content-range': `bytes 0-${body.length - 1}/${body.length}` }, raw: body });
      const fin = await action(m, 'drive_upload_complete', { upload_token: token });
      const fileId = fin.data?.data?.file?.file_id;
      if (fileId) {
        await action(m, 'drive_trash', { file_id: fileId });
        await action(m, 'drive_delete_forever', { file_id: fileId });
      }
    },
  ];
  const end = Date.now() + DURATION * 1000;
  let n = 0;
  const workers = members.map(async (m) => {
    while (Date.now() < end) {
      const i = n++;
      await steps[i % steps.length](m, i);
    }
  });
  const samples = [];
  const started = Date.now();
  console.log(`soak: ${DURATION} s on PostgreSQL, ${CONNECTIONS} clients, warm-up ${WARMUP} s, a sample every ${SAMPLE} s`);
  console.log('   t s    req/s   p99 ms   RSS MiB');
  const sampler = (async () => {
    let lastDone = 0;
    while (Date.now() < end) {
      await sleep(SAMPLE * 1000);
      const window = latencies.splice(0).sort((a, b) => a - b);
      const p99 = window.length ? window[Math.min(window.length - 1, Math.floor(window.length * 0.99))] : 0;
      const s = { t: Math.round((Date.now() - started) / 1000), rps: (done - lastDone) / SAMPLE, p99, rss: rssOf(pid) };
      lastDone = done;
      samples.push(s);
      console.log(`${String(s.t).padStart(6)} ${s.rps.toFixed(0).padStart(8)} ${s.p99.toFixed(1).padStart(8)} ${mib(s.rss).padStart(9)}`);
    }
  })();
  await Promise.all([...workers, sampler]);
  const after = samples.filter((s) => s.t > WARMUP);
  const first = after[0]?.rss ?? 0;
  const peak = Math.max(...after.map((s) => s.rss));
  const growth = first ? (peak - first) / first : 0;
  const flat = after.length >= 2 && growth <= 0.1;
  console.log(`\nsoak: ${done} requests, ${(done / DURATION).toFixed(0)} req/s overall, ${bad} 5xx or connection errors${badSamples.length ? ` (${badSamples.join('; ')})` : ''}`);
  console.log(`RSS after warm-up: first ${mib(first)} MiB, peak ${mib(peak)} MiB, growth ${(growth * 100).toFixed(1)}% (limit 10%): ${flat ? 'flat' : after.length < 2 ? 'too few samples after warm-up' : 'GROWING'}`);
  return { ok: flat && bad === 0 };
}

export async function runSoak() {
  try {
    const { ok } = await main();
    return ok ? 0 : 1;
  } catch (e) {
    console.error(`soak failed: ${e.stack ?? e}`);
    return 1;
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) process.exit(await runSoak());
