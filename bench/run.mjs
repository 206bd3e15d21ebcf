#!/usr/bin/env node
// `npm run bench`: starts the real server and two baselines as child processes on 127.0.0.1, loads each
// scenario from a separate autocannon process, prints a table and writes bench/results/latest.json.
// See bench/README.md. Environment: DATABASE_URL (a second pass on PostgreSQL after the PGlite one),
// BENCH_DATABASES (pglite, postgres or both, comma-separated), REDIS_URL (passed to the server),
// BENCH_DURATION (s, default 5), BENCH_WARMUP (s, default 1), BENCH_CONNECTIONS (default 50),
// BENCH_ROUNDS (default 5: in every round each compared scenario runs straight after its baseline, and a
// ratio is the median over the rounds of those paired ratios, so drift in the machine's speed and a burst
// of load from elsewhere skew one round's pair rather than every ratio),
// BENCH_ONLY (a regular expression over scenario names; baselines of selected scenarios always run),
// BENCH_PROFILE=1 (each server writes bench/results/<target>.cpuprofile when it stops).
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { requestMaker } from './vary.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const env = process.env;
const settings = {
  durationSeconds: Number(env.BENCH_DURATION ?? 5),
  warmupSeconds: Number(env.BENCH_WARMUP ?? 1),
  connections: Number(env.BENCH_CONNECTIONS ?? 50),
  rounds: Number(env.BENCH_ROUNDS ?? 5),
};

// ---- What to measure. A scenario names the server it loads and the baseline it is compared with. ----
// `headers` may be a function of the credentials its server and a login produced:
//   { machineKey: {public_key, secret_key}, sessionKey: {public_key, secret_key}, staffKey, userId, gatedPostId, posts }
// `path` may be a function of the credentials too (the gated post's id comes from the server). `body` is
// sent as is; `vary` lists what changes from one request to the next (bench/vary.mjs).
// Servers (`target`): `bare` and `select` are the baselines; `gatehouse` the real server with the read
// scenarios' data (at log level warn, or a scenario's `logLevel`); `writer` the real server for the write
// scenarios, in a database of its own, so that the rows they add never reach the reads.
const BARE = 'bare Fastify JSON';
const SELECT = 'bare Fastify + 1 PK SELECT';
const INSERT = 'bare Fastify + 1 INSERT';
const SESSION = 'GET auth/session, session key';
const PUBLIC_POST = 'GET Post/{id}, tierless member';
const PUBLIC_POST_BARE = 'GET Post/{id}, tierless member, against bare';
const PUBLIC_POST_INFO = 'GET Post/{id}, log level info';
const GATED_POST = 'GET Post/{gated id}, tierless member';
const PAGE_OF_20 = 'GET Posts?numperpage=20, tierless member';
const DEEP_PAGE = 'GET Posts page 400 (or the last), tierless member';
const TITLE_PAGE = 'GET Posts sorted by title, tierless member';
const MISS_PAGE = 'GET Posts, a new filter value per request';
const CREATE = 'POST /Post (create), staff machine key';
const EDIT = 'action account_edit, session key';
const EDIT_IK = 'action account_edit + Idempotency-Key';
const PURCHASE = 'card purchase webhook (new user, event)';
const sessionKey = (c) => c.sessionKey;
const json = { 'content-type': 'application/json' };
/** Page 400 of 20 when there are that many posts, else the last page (pages count from 0). */
const deepPage = (c) => Math.min(400, Math.max(0, Math.ceil(c.posts / 20) - 1));
const allScenarios = [
  { name: BARE, target: 'bare', method: 'GET', path: '/hello', expect: 200 },
  { name: SELECT, target: 'select', method: 'GET', path: '/item/1', expect: 200 },
  { name: INSERT, target: 'select', method: 'POST', path: '/item', headers: json, body: '{"name":"item"}', vary: ['item-name'], expect: 200 },
  { name: '404 unauthenticated', target: 'gatehouse', method: 'GET', path: '/api/v1/nope', expect: 404, baseline: BARE },
  { name: PUBLIC_POST_BARE, target: 'gatehouse', method: 'GET', path: '/api/v1/Post/1', headers: sessionKey, expect: 200, baseline: BARE },
  { name: SESSION, target: 'gatehouse', method: 'GET', path: '/api/v1/auth/session', headers: sessionKey, expect: 200, baseline: SELECT, scale: true },
  { name: 'GET auth/session, machine key', target: 'gatehouse', method: 'GET', path: '/api/v1/auth/session', headers: (c) => c.machineKey, expect: 200, baseline: SESSION },
  // The three cases of BENCH_PEER (a member without a tier, signed in: a session key).
  { name: PUBLIC_POST, target: 'gatehouse', method: 'GET', path: '/api/v1/Post/1', headers: sessionKey, expect: 200, baseline: SELECT, peer: 'public post' },
  // The same read from the same server at npm start's log level (info), straight after the one at warn.
  { name: PUBLIC_POST_INFO, target: 'gatehouse', logLevel: 'info', method: 'GET', path: '/api/v1/Post/1', headers: sessionKey, expect: 200, baseline: PUBLIC_POST },
  { name: GATED_POST, target: 'gatehouse', method: 'GET', path: (c) => `/api/v1/Post/${c.gatedPostId}`, headers: sessionKey, expect: 200, baseline: SELECT, peer: 'gated post', scale: true },
  { name: PAGE_OF_20, target: 'gatehouse', method: 'GET', path: '/api/v1/Posts?numperpage=20', headers: sessionKey, expect: 200, baseline: SELECT, peer: 'page of 20', scale: true },
  { name: DEEP_PAGE, target: 'gatehouse', method: 'GET', path: (c) => `/api/v1/Posts?numperpage=20&page=${deepPage(c)}`, headers: sessionKey, expect: 200, baseline: SELECT, scale: true },
  { name: TITLE_PAGE, target: 'gatehouse', method: 'GET', path: '/api/v1/Posts?numperpage=20&sort=pst_title', headers: sessionKey, expect: 200, baseline: SELECT, scale: true },
  { name: MISS_PAGE, target: 'gatehouse', method: 'GET', path: '/api/v1/Posts?numperpage=20', headers: sessionKey, vary: ['filter'], expect: 200, baseline: SELECT, scale: true },
  // Writes, each against one INSERT through the same database layer.
  { name: CREATE, target: 'writer', method: 'POST', path: '/api/v1/Post', headers: (c) => ({ ...c.staffKey, 'content-type': 'application/x-www-form-urlencoded' }),
    body: `pst_is_published=1&pst_short_description=Bench&pst_body=${'Lorem+ipsum+dolor+sit+amet.+'.repeat(40)}`, vary: ['post-title'], expect: 200, baseline: INSERT },
  { name: EDIT, target: 'writer', method: 'POST', path: '/api/v1/action/account_edit', headers: (c) => ({ ...c.sessionKey, ...json }),
    body: JSON.stringify({ usr_first_name: 'Bench', usr_email: 'bench@example.com' }), vary: ['editor', 'first-name'], expect: 200, baseline: INSERT },
  { name: EDIT_IK, target: 'writer', method: 'POST', path: '/api/v1/action/account_edit', headers: (c) => ({ ...c.sessionKey, ...json }),
    body: JSON.stringify({ usr_first_name: 'Bench', usr_email: 'bench@example.com' }), vary: ['editor', 'first-name', 'idempotency-key'], expect: 200, baseline: EDIT },
  // A purchase the open store acts on (a 200 alone is also what a closed store answers, granting nothing).
  { name: PURCHASE, target: 'writer', method: 'POST', path: '/api/v1/webhooks/card_processor', headers: json, body: '{}', vary: ['purchase'], expect: 200, baseline: INSERT,
    check: (answer) => (answer.data?.processed === true && answer.data.outcomes?.length > 0 ? null : `the purchase was not applied: ${JSON.stringify(answer.data)}`) },
];

// Targets are reported, never asserted. `of` is the scenario the ratio is taken against.
const goals = [
  { goal: '404 >= 50% of bare Fastify', scenario: '404 unauthenticated', of: BARE, min: 0.5 },
  { goal: 'cached GET Post/{id} >= 50% of bare Fastify JSON', scenario: PUBLIC_POST_BARE, of: BARE, min: 0.5 },
  { goal: 'GET Post/{id} at log level info >= 90% of the same at warn', scenario: PUBLIC_POST_INFO, of: PUBLIC_POST, min: 0.9 },
  { goal: 'machine-key session read within 15% of session-key', scenario: 'GET auth/session, machine key', of: SESSION, min: 0.85 },
  { goal: 'session-key read >= 50% of one-SELECT baseline (PostgreSQL)', scenario: SESSION, of: SELECT, min: 0.5, databases: ['postgres'] },
  { goal: 'GET Post/{id} >= 40% of one-SELECT baseline (PostgreSQL)', scenario: PUBLIC_POST, of: SELECT, min: 0.4, databases: ['postgres'] },
  { goal: 'GET Posts?numperpage=20 >= 25% of one-SELECT baseline (PostgreSQL)', scenario: PAGE_OF_20, of: SELECT, min: 0.25, databases: ['postgres'] },
  { goal: 'a page that misses every cache >= 25% of one-SELECT', scenario: MISS_PAGE, of: SELECT, min: 0.25 },
  { goal: 'CRUD create >= 50% of one-INSERT', scenario: CREATE, of: INSERT, min: 0.5 },
  { goal: 'account_edit >= 40% of one-INSERT', scenario: EDIT, of: INSERT, min: 0.4 },
  { goal: 'Idempotency-Key costs at most 15% over account_edit without it', scenario: EDIT_IK, of: EDIT, min: 1 / 1.15 },
  { goal: 'purchase webhook >= 15% of one-INSERT', scenario: PURCHASE, of: INSERT, min: 0.15 },
];
/** At scale (BENCH_POSTS over 50): these keep at least this share of their ratio in the 50-post run. */
const SCALE_KEEPS = 0.8;
const SCALE_REFERENCE_POSTS = 50;

/**
 * BENCH_PEER=1: the three cases marked `peer` against another server too, given on the command line
 * (`npm run bench -- <public post URL> <gated post URL> <page of 20 URL> [--header 'name: value']...
 * [--peer-pid N]`): each round runs a case on the peer and straight after on this server, and the ratio is
 * this server's req/s over the peer's. Headers (a member's cookie, say) go to the peer's requests only;
 * with --peer-pid the peer's RSS is read as this server's is.
 */
function peerConfig() {
  if (!env.BENCH_PEER) return null;
  const args = process.argv.slice(2);
  const urls = [];
  const headers = {};
  let pid = null;
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--header') {
      const [name, ...value] = (args[++i] ?? '').split(':');
      if (!name || value.length === 0) throw new Error(`--header wants 'name: value', got '${args[i]}'`);
      headers[name.trim().toLowerCase()] = value.join(':').trim();
    } else if (args[i] === '--peer-pid') pid = Number(args[++i]);
    else urls.push(args[i]);
  }
  const cases = allScenarios.filter((s) => s.peer);
  if (urls.length !== cases.length || !urls.every((u) => /^https?:\/\//.test(u))) {
    throw new Error(`BENCH_PEER wants ${cases.length} URLs on the command line (${cases.map((s) => s.peer).join(', ')}), got ${urls.length}`);
  }
  return { pid, cases: cases.map((s, i) => ({ scenario: s.name, name: `peer: ${s.peer}`, url: urls[i], headers })) };
}

/** Tail targets, for every scenario of the real server: p99 under this many times p50, and no request over 1 s. */
const TAIL_P99_OVER_P50 = 10;

// ---- Servers ----
const children = new Set();
const scratch = [];

// Every target runs with the node flags `npm start` gives the server (read from package.json).
const SERVER_NODE_FLAGS = JSON.parse(readFileSync(path.join(here, '..', 'package.json'), 'utf8'))
  .scripts.start.split(/\s+/)
  .filter((word) => word.startsWith('--'));

/** The servers a pass may start: the mode of bench/server.mjs, and the environment it adds. */
const TARGETS = {
  bare: { mode: 'bare' },
  select: { mode: 'select' },
  gatehouse: { mode: 'gatehouse', real: true },
  writer: { mode: 'writer', real: true, env: { BENCH_MEMBERS: '0', BENCH_POSTS: '1' } },
};

function startServer(target, extraEnv) {
  const mode = TARGETS[target].mode;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...SERVER_NODE_FLAGS, path.join(here, 'server.mjs'), mode], {
      env: { ...env, ...extraEnv },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    children.add(child);
    child.once('exit', (code) => {
      children.delete(child);
      reject(new Error(`${target} server exited with ${code} before it was ready`));
    });
    // The real server may log (warn and above) before its ready line; that line is the JSON with `mode`.
    const lines = createInterface({ input: child.stdout });
    lines.on('line', function ready(line) {
      if (!line.startsWith('{"mode"')) return;
      // Whatever it logs from now on (every request at log level info) is read and dropped, as a log
      // collector would take it, without splitting it into lines here: the pipe must not fill up and
      // block the server, and this process shares the machine's CPUs with it.
      lines.off('line', ready);
      lines.close();
      child.stdout.resume();
      const info = JSON.parse(line);
      resolve({ ...info, child, rssAtStartMb: rssMb(child.pid), url: `http://127.0.0.1:${info.port}` });
    });
  });
}

function stopServer(server) {
  return new Promise((resolve) => {
    if (server.child.exitCode !== null) return resolve();
    server.child.removeAllListeners('exit');
    server.child.once('exit', () => resolve());
    server.child.kill('SIGTERM');
  });
}

let scratchDatabases = 0;
/** A scratch PostgreSQL database for this run, dropped at the end. */
async function scratchPostgres(url) {
  const name = `gh_bench_${process.pid}_${Date.now()}_${++scratchDatabases}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`create database ${name}`);
  scratch.push(async () => {
    await admin.query(`drop database if exists ${name} with (force)`);
    await admin.end();
  });
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

function scratchDir(label) {
  const dir = mkdtempSync(path.join(os.tmpdir(), `gh-bench-${label}-`));
  scratch.push(async () => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function cleanUp() {
  await Promise.allSettled([...children].map((child) => stopServer({ child })));
  for (const undo of scratch.reverse()) await undo().catch((e) => console.error('clean-up:', e.message));
}

// ---- Memory ----
/** Resident set of a process in MB (VmRSS from /proc), or null where there is no /proc. */
function rssMb(pid) {
  try {
    const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return kb ? Number(kb[1]) / 1024 : null;
  } catch {
    return null;
  }
}
/** Quiet time after the set-up (login, probes) before the idle RSS is read. */
const IDLE_SETTLE_MS = 3000;
const RSS_LIMIT_MB = 400;

/** The peak RSS of `pid` over the time it is marked active, sampled every 100 ms. */
function sampleRss(pid) {
  let peak = null;
  let on = false;
  const timer = setInterval(() => {
    if (!on) return;
    const mb = rssMb(pid);
    if (mb !== null && (peak === null || mb > peak)) peak = mb;
  }, 100);
  return {
    active: (value) => (on = value),
    stop: () => {
      clearInterval(timer);
      return peak;
    },
  };
}

// ---- Load ----
function runLoad(opts) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(here, 'load.mjs'), JSON.stringify(opts)], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.once('exit', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`load generator exited with ${code}`))));
  });
}

async function login(server) {
  const res = await fetch(`${server.url}/api/v1/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: server.email, password: server.password, device_label: 'bench' }),
  });
  const body = await res.json();
  if (res.status !== 200) throw new Error(`login failed: ${res.status} ${JSON.stringify(body)}`);
  return { public_key: body.data.public_key, secret_key: body.data.secret_key };
}

const medianOf = (xs) => {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

/**
 * One round's runs: every scenario that has a baseline straight after a run of that baseline (run again
 * unless it is the run just before), and a baseline nothing is compared with once on its own.
 */
function roundSequence(prepared) {
  const byName = new Map(prepared.map((p) => [p.s.name, p]));
  const compared = new Set(prepared.map((p) => p.s.baseline).filter(Boolean));
  const sequence = [];
  for (const p of prepared) {
    if (!p.s.baseline) {
      if (!compared.has(p.s.name)) sequence.push(p);
      continue;
    }
    if (sequence.at(-1)?.s.name !== p.s.baseline) sequence.push(byName.get(p.s.baseline));
    sequence.push(p);
  }
  return sequence;
}

const fmt = (n, digits = 0) => (n === undefined || n === null ? '-' : n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits }));

/** BENCH_POSTS: the read server's published posts; more than 50 is a scale run (its scenarios only, by default). */
const POSTS = Number(env.BENCH_POSTS ?? SCALE_REFERENCE_POSTS);
const SCALE_RUN = POSTS > SCALE_REFERENCE_POSTS;

/** Buyers the writer seeds for the purchase webhooks: enough for 1,500 purchases a second over every run and the first warm-up. */
const buyersNeeded = () => Number(env.BENCH_BUYERS ?? Math.ceil((settings.rounds * (settings.warmupSeconds + settings.durationSeconds) + Number(env.BENCH_FIRST_WARMUP ?? 3)) * 1500) + 100);

/**
 * Waits until a real server answers, three times in a row within SETTLED_MS, a read that must wait its turn
 * on the database (a post that does not exist: absent rows are never cached, so it is a statement): a run
 * whose requests each hold the embedded database for long (a page no cache holds, over 100,000 posts)
 * leaves a queue of them behind when its clients have gone, and the next run must not be measured behind
 * that queue. (A 404 was no test: it is answered between two queued statements.) Resolves with the
 * milliseconds waited.
 */
const SETTLED_MS = 100;
async function settle(server, headers) {
  const started = performance.now();
  let quick = 0;
  while (quick < 3 && performance.now() - started < 600_000) {
    const t0 = performance.now();
    await fetch(`${server.url}/api/v1/Post/999999999`, { headers }).then((r) => r.arrayBuffer(), () => undefined);
    quick = performance.now() - t0 < SETTLED_MS ? quick + 1 : 0;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return performance.now() - started;
}

/** The log level a real server serves the next run at: the scenario's, else the bench's (BENCH_LOG_LEVEL, warn). */
async function logLevelFor(server, s) {
  if (!server.control_port) return;
  const level = s.logLevel ?? env.BENCH_LOG_LEVEL ?? 'warn';
  if (server.logLevel === level) return;
  const res = await fetch(`http://127.0.0.1:${server.control_port}/log-level/${level}`, { method: 'PUT' });
  if (res.status !== 200) throw new Error(`could not set the log level ${level}: ${res.status}`);
  server.logLevel = level;
}

/** The credentials a real server's scenarios use: from its set-up and a login. */
async function credentialsOf(server) {
  return {
    userId: server.user_id,
    gatedPostId: server.gated_post_id,
    posts: server.posts,
    machineKey: { public_key: server.public_key, secret_key: server.secret_key },
    staffKey: server.staff_public_key ? { public_key: server.staff_public_key, secret_key: server.staff_secret_key } : undefined,
    sessionKey: await login(server),
  };
}

/** One request as the scenario's load will send it (its `vary` applied), before the load: the wrong status stops the run. */
async function probe(p, options) {
  const { s, load } = p;
  const maker = s.vary?.length ? requestMaker(s.vary, options) : null;
  const u = new URL(load.url);
  const req = maker ? maker.next({ method: s.method, path: u.pathname + u.search, headers: load.headers, body: load.body }) : { method: s.method, path: u.pathname + u.search, headers: load.headers, body: load.body };
  const res = await fetch(u.origin + req.path, { method: req.method, headers: req.headers, body: req.body });
  const text = await res.text();
  if (res.status !== s.expect) throw new Error(`${s.name}: expected ${s.expect}, got ${res.status} ${text.slice(0, 300)}`);
  const wrong = s.check?.(JSON.parse(text));
  if (wrong) throw new Error(`${s.name}: ${wrong}`);
  return maker?.purchases ?? 0;
}

/** One pass on one database: its own servers (stopped at the end), every scenario, its table and targets. */
async function measure(database, peer) {
  const only = env.BENCH_ONLY ? new RegExp(env.BENCH_ONLY, 'i') : null;
  // Peer mode: the peer's cases, each followed by this server's same case, compared with it.
  const scenarios = peer
    ? [
        ...peer.cases.map((c) => ({ name: c.name, target: 'peer', method: 'GET', path: c.url, headers: c.headers, expect: 200 })),
        ...allScenarios.filter((s) => s.peer).map((s) => ({ ...s, baseline: peer.cases.find((c) => c.scenario === s.name).name })),
      ]
    : allScenarios;
  // A scale run measures what scale changes (the scenarios marked `scale`), unless BENCH_ONLY says otherwise.
  const selected = scenarios.filter((s) => (only ? only.test(s.name) : !SCALE_RUN || peer || s.scale));
  // A selected scenario brings its baseline, and that baseline its own.
  const wanted = new Set();
  const byName = new Map(scenarios.map((s) => [s.name, s]));
  for (let s of selected) for (; s && !wanted.has(s.name); s = byName.get(s.baseline)) wanted.add(s.name);
  const plan = scenarios.filter((s) => wanted.has(s.name));

  // Every server has a database of its own (a scratch PostgreSQL database, or a PGlite data directory) and
  // a scratch data directory (on PostgreSQL for its logs and initial-admin.json, not the checkout's ./data).
  const dbEnv = async (label) => ({
    BENCH_DATA_DIR: scratchDir(label.replace(/\W/g, '-')),
    DATABASE_URL: database === 'postgres' ? await scratchPostgres(env.DATABASE_URL) : '',
  });
  const servers = {};
  const profileEnv = (target) => (env.BENCH_PROFILE ? { BENCH_CPU_PROFILE: path.join(here, 'results', `${target.replace(/\W/g, '-')}.cpuprofile`) } : {});
  mkdirSync(path.join(here, 'results'), { recursive: true });
  if (peer) servers.peer = { url: '', child: { pid: peer.pid } };
  // One at a time, so that no server's start-up (migrations, seeding) competes with another's.
  for (const target of new Set(plan.map((s) => s.target).filter((t) => t !== 'peer'))) {
    const extra = { BENCH_POSTS: String(POSTS), ...(target === 'writer' ? { BENCH_BUYERS: String(buyersNeeded()) } : {}), ...TARGETS[target].env };
    servers[target] = await startServer(target, { ...(await dbEnv(target)), ...profileEnv(target), ...extra });
    if (TARGETS[target].real) console.log(`${target}: first start ${fmt(servers[target].start_ms / 1000, 1)} s, seeding ${fmt(servers[target].seed_ms / 1000, 1)} s (${fmt(servers[target].posts)} posts, ${fmt(servers[target].members)} more members${servers[target].buyers ? `, ${fmt(servers[target].buyers.last - servers[target].buyers.first + 1)} buyers` : ''}), RSS ${fmt(servers[target].rssAtStartMb)} MB`);
  }
  const real = Object.keys(servers).filter((t) => TARGETS[t]?.real);
  const credentials = {};
  for (const t of real) credentials[t] = await credentialsOf(servers[t]);
  // The writer's buyers: each purchase takes the next unused one.
  const writer = servers.writer;
  const purchase = writer ? { buyers: { next: writer.buyers.first, last: writer.buyers.last }, productId: writer.product_id, secret: 'whsec_bench' } : undefined;
  /** What a scenario's `vary` needs besides the request: the next buyers, the writer's editing members. */
  const varyOptions = (s) => ({ ...(s.vary?.includes('purchase') ? { purchase } : {}), ...(s.vary?.includes('editor') ? { editors: writer.editors } : {}) });

  const loadBefore = os.loadavg()[0];
  console.log(
    `database: ${database}; rate-limit store: ${env.REDIS_URL ? 'redis' : 'memory'}; ${settings.connections} connections, ` +
      `${settings.warmupSeconds} s warm-up + ${settings.durationSeconds} s per scenario, ${settings.rounds} rounds (each ratio paired within a round; medians reported); node ${process.version}; ${os.cpus().length} CPUs; load average ${fmt(loadBefore, 1)}`,
  );
  const prepared = [];
  for (const s of plan) {
    const server = servers[s.target];
    const c = credentials[s.target] ?? {};
    const headers = typeof s.headers === 'function' ? s.headers(c) : (s.headers ?? {});
    const urlPath = typeof s.path === 'function' ? s.path(c) : s.path;
    const p = { s, urlPath, load: { url: server.url + urlPath, method: s.method, headers, body: s.body, vary: s.vary, connections: settings.connections, durationSeconds: settings.durationSeconds } };
    // One request first: a scenario that answers the wrong status measures the wrong thing.
    await logLevelFor(server, s);
    const used = await probe(p, varyOptions(s));
    if (purchase) purchase.buyers.next += used;
    prepared.push(p);
  }
  // Each round runs every compared scenario right after a fresh run of what it is compared with, so a
  // ratio divides two figures taken seconds apart: the machine's speed drifts by a factor of two over a
  // minute here, and a baseline measured half a round earlier would carry that drift into the ratio.
  const sequence = roundSequence(prepared);
  // Each real server's memory: right after its (first) start, idle after the set-up, and its peak under load.
  const memory = {};
  for (const t of real) memory[t] = { startMb: servers[t].rssAtStartMb };
  const peerMemory = peer?.pid ? { startMb: null } : undefined;
  if (real.length > 0) {
    await new Promise((resolve) => setTimeout(resolve, IDLE_SETTLE_MS));
    for (const t of real) memory[t].idleMb = rssMb(servers[t].child.pid);
    if (peerMemory) peerMemory.idleMb = rssMb(peer.pid);
  }
  const samplers = Object.fromEntries(real.map((t) => [t, sampleRss(servers[t].child.pid)]));
  const peerSampler = peerMemory ? sampleRss(peer.pid) : undefined;
  // A fresh server's first seconds under load are not its steady state (the first run of the first
  // scenario on a new process read a tenth of the same run a minute later: code still being optimised,
  // the heap still growing): every scenario is loaded once before the rounds, and that run is dropped.
  const warmUpSeconds = Number(env.BENCH_FIRST_WARMUP ?? 3);
  if (warmUpSeconds > 0) {
    console.log(`warm-up: every scenario once for ${warmUpSeconds} s, not counted`);
    for (const { s, load } of prepared) {
      await logLevelFor(servers[s.target], s);
      const r = await runLoad({ ...load, durationSeconds: warmUpSeconds, warmupSeconds: 0, ...varyOptions(s) });
      if (r.purchases) purchase.buyers.next += r.purchases;
      if (TARGETS[s.target]?.real) await settle(servers[s.target], credentials[s.target].machineKey);
    }
  }
  const runs = new Map(plan.map((s) => [s.name, []]));
  const pairedRatios = new Map(prepared.filter(({ s }) => s.baseline).map(({ s }) => [s.name, []]));
  let shortOfBuyers = 0;
  for (let round = 1; round <= settings.rounds; round++) {
    console.log(`round ${round}/${settings.rounds} (load average ${fmt(os.loadavg()[0], 1)})`);
    const latest = new Map();
    for (const { s, load } of sequence) {
      // Warm up before every run: the previous scenario may have been another server.
      await logLevelFor(servers[s.target], s);
      for (const t of real) samplers[t].active(s.target === t);
      peerSampler?.active(s.target === 'peer');
      const r = await runLoad({ ...load, warmupSeconds: settings.warmupSeconds, ...varyOptions(s) });
      for (const t of real) samplers[t].active(false);
      peerSampler?.active(false);
      if (TARGETS[s.target]?.real) {
        const waited = await settle(servers[s.target], credentials[s.target].machineKey);
        if (waited > 1000) console.log(`  (the server took ${fmt(waited / 1000, 1)} s to work off the requests left queued)`);
      }
      if (r.purchases) purchase.buyers.next += r.purchases;
      shortOfBuyers += r.shortOf;
      r.errors += r.shortOf;
      runs.get(s.name).push(r);
      latest.set(s.name, r);
      const base = s.baseline ? latest.get(s.baseline) : undefined;
      if (base) pairedRatios.get(s.name).push(r.requestsPerSecond / base.requestsPerSecond);
      console.log(`  ${s.name.padEnd(50)} ${fmt(r.requestsPerSecond).padStart(8)} req/s${base ? `  ratio ${fmt(r.requestsPerSecond / base.requestsPerSecond, 2)}` : ''}`);
    }
  }
  if (shortOfBuyers > 0) console.log(`the writer ran out of buyers: ${shortOfBuyers} purchase requests reused an empty body (counted as bad); raise BENCH_BUYERS`);
  for (const t of real) {
    memory[t].loadPeakMb = samplers[t].stop();
    memory[t].afterMb = rssMb(servers[t].child.pid);
  }
  if (peerMemory) {
    peerMemory.loadPeakMb = peerSampler.stop();
    peerMemory.afterMb = rssMb(peer.pid);
  }
  const results = [];
  for (const { s, urlPath } of prepared) {
    const all = runs.get(s.name);
    const median = [...all].sort((a, b) => a.requestsPerSecond - b.requestsPerSecond)[Math.floor(all.length / 2)];
    const unexpected = all
      .flatMap((r) => Object.entries(r.statusCodes))
      .filter(([code]) => Number(code) !== s.expect)
      .reduce((n, [, c]) => n + c, 0);
    const errors = all.reduce((n, r) => n + r.errors + r.timeouts, 0);
    const overOneSecond = all.reduce((n, r) => n + (r.overOneSecond ?? 0), 0);
    const ratios = pairedRatios.get(s.name) ?? [];
    results.push({
      name: s.name, target: s.target, method: s.method, path: urlPath, baseline: s.baseline ?? null, expect: s.expect,
      requestsPerSecond: median.requestsPerSecond, latencyMs: median.latencyMs, overOneSecond, unexpected, errors,
      ratioToBaseline: ratios.length > 0 ? medianOf(ratios) : null,
      roundRatios: ratios,
      runs: all.map((r) => ({ requestsPerSecond: r.requestsPerSecond, latencyMs: r.latencyMs, overOneSecond: r.overOneSecond, statusCodes: r.statusCodes, errors: r.errors, timeouts: r.timeouts })),
    });
  }

  const rows = [['scenario', 'req/s', 'p50 ms', 'p99 ms', '>1 s', 'baseline', 'ratio', 'rounds\' ratios', 'bad']];
  for (const r of results) {
    rows.push([
      r.name, fmt(r.requestsPerSecond), fmt(r.latencyMs.p50), fmt(r.latencyMs.p99), fmt(r.overOneSecond), r.baseline ?? '',
      r.ratioToBaseline === null ? '' : fmt(r.ratioToBaseline, 2),
      r.roundRatios.map((x) => fmt(x, 2)).join(' '),
      String(r.unexpected + r.errors),
    ]);
  }
  const widths = rows[0].map((_, i) => Math.max(...rows.map((row) => row[i].length)));
  console.log('');
  for (const [i, row] of rows.entries()) {
    console.log(row.map((cell, j) => (j === 0 || j === 5 || j === 7 ? cell.padEnd(widths[j]) : cell.padStart(widths[j]))).join('  '));
    if (i === 0) console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  }

  const resultByName = new Map(results.map((r) => [r.name, r]));
  const goalResults = [];
  console.log('\ntargets (median of the rounds\' paired ratios; reported, not asserted):');
  for (const g of goals) {
    const a = resultByName.get(g.scenario);
    if (!a || !resultByName.has(g.of)) continue;
    if (a.baseline !== g.of) throw new Error(`goal '${g.goal}': ${g.scenario} is compared with ${a.baseline}, not ${g.of}`);
    const ratio = a.ratioToBaseline;
    const applies = !g.databases || g.databases.includes(database);
    const met = ratio >= g.min;
    const roundsMet = a.roundRatios.filter((x) => x >= g.min).length;
    goalResults.push({ goal: g.goal, ratio, min: g.min, met, applies, roundRatios: a.roundRatios, roundsMet });
    console.log(
      `  ${met ? 'met    ' : 'MISSED '} ${g.goal}: ${fmt(ratio * 100, 1)}% (met in ${roundsMet} of ${a.roundRatios.length} rounds)${applies ? '' : ` (informational on ${database})`}`,
    );
  }

  // At scale: each scale scenario's ratio against its ratio in the last 50-post run on this database.
  const scale = SCALE_RUN ? scaleComparison(database, results) : null;

  // The tail, per scenario of a real server: p99 of the median run against its p50, and requests over
  // 1 s summed over all rounds.
  const tails = [];
  for (const r of results.filter((x) => TARGETS[x.target]?.real)) {
    const ratio = r.latencyMs.p50 > 0 ? r.latencyMs.p99 / r.latencyMs.p50 : null;
    const met = ratio !== null && ratio < TAIL_P99_OVER_P50 && r.overOneSecond === 0;
    tails.push({ scenario: r.name, p50: r.latencyMs.p50, p99: r.latencyMs.p99, p99OverP50: ratio, overOneSecond: r.overOneSecond, met });
    console.log(`  ${met ? 'met    ' : 'MISSED '} tail of ${r.name}: p99 ${fmt(r.latencyMs.p99)} ms = ${ratio === null ? '-' : fmt(ratio, 1)}× p50 (under ${TAIL_P99_OVER_P50}×), ${fmt(r.overOneSecond)} over 1 s (none)`);
  }
  for (const t of real) {
    const m = memory[t];
    const worst = Math.max(m.startMb, m.idleMb, m.loadPeakMb ?? 0);
    m.met = worst < RSS_LIMIT_MB;
    console.log(
      `  ${database === 'pglite' ? (m.met ? 'met     ' : 'MISSED  ') : ''}${t} server RSS: ${fmt(m.startMb)} MB at start, ${fmt(m.idleMb)} MB idle, ` +
        `${fmt(m.loadPeakMb)} MB peak under load, ${fmt(m.afterMb)} MB after${database === 'pglite' ? ` (under ${RSS_LIMIT_MB} MB at every point on PGlite)` : ''}`,
    );
  }
  if (peerMemory) console.log(`          peer RSS: ${fmt(peerMemory.idleMb)} MB idle, ${fmt(peerMemory.loadPeakMb)} MB peak under load, ${fmt(peerMemory.afterMb)} MB after`);
  const startUp = Object.fromEntries(real.map((t) => [t, { firstStartMs: servers[t].start_ms, seedMs: servers[t].seed_ms, posts: servers[t].posts, members: servers[t].members }]));

  // Other work on the machine moves every number; say how busy it was.
  const loadAfter = os.loadavg()[0];
  console.log(`\nmachine load average (1 min): ${fmt(loadBefore, 1)} before, ${fmt(loadAfter, 1)} after, on ${os.cpus().length} CPUs`);
  // This database's servers leave before the next pass, so that they do not compete with its servers.
  await Promise.all(Object.values(servers).map((server) => stopServer(server)));
  const pass = { database, posts: POSTS, at: new Date().toISOString(), loadAverage: { before: loadBefore, after: loadAfter }, startUp, results, goals: goalResults, scale, tails, memory, peerMemory: peerMemory ?? null };
  // The ratios of this database and post count, for a later scale run to compare with.
  if (!peer && !only) writeFileSync(path.join(here, 'results', `${database}-posts-${POSTS}.json`), `${JSON.stringify(pass, null, 2)}\n`);
  return pass;
}

/**
 * A scale run's scenarios against the same scenarios in the last full 50-post run on the same database
 * (bench/results/<database>-posts-50.json): each keeps at least SCALE_KEEPS of its ratio there.
 */
function scaleComparison(database, results) {
  const file = path.join(here, 'results', `${database}-posts-${SCALE_REFERENCE_POSTS}.json`);
  let reference;
  try {
    reference = JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    console.log(`  (no ${path.relative(process.cwd(), file)}: run the ${SCALE_REFERENCE_POSTS}-post bench on ${database} first to compare this scale run with it)`);
    return null;
  }
  const before = new Map(reference.results.map((r) => [r.name, r]));
  const out = [];
  console.log(`  at ${fmt(POSTS)} posts against the ${SCALE_REFERENCE_POSTS}-post run of ${reference.at} (load ${fmt(reference.loadAverage.before, 1)}):`);
  for (const r of results) {
    const old = before.get(r.name);
    if (!allScenarios.find((s) => s.name === r.name)?.scale || !old?.ratioToBaseline || r.ratioToBaseline === null) continue;
    const keeps = r.ratioToBaseline / old.ratioToBaseline;
    const met = keeps >= SCALE_KEEPS;
    out.push({ scenario: r.name, ratio: r.ratioToBaseline, referenceRatio: old.ratioToBaseline, keeps, met });
    console.log(`  ${met ? 'met    ' : 'MISSED '} ${r.name} keeps ${fmt(keeps * 100, 0)}% of its ${SCALE_REFERENCE_POSTS}-post ratio (${fmt(r.ratioToBaseline, 2)} against ${fmt(old.ratioToBaseline, 2)}; at least ${fmt(SCALE_KEEPS * 100, 0)}%)`);
  }
  return { referenceAt: reference.at, keepsAtLeast: SCALE_KEEPS, scenarios: out };
}

/** PGlite always, then PostgreSQL when DATABASE_URL is set (BENCH_DATABASES=pglite|postgres picks one). */
async function main() {
  const databases = env.BENCH_DATABASES ? env.BENCH_DATABASES.split(',').map((d) => d.trim()) : ['pglite', ...(env.DATABASE_URL ? ['postgres'] : [])];
  for (const d of databases) {
    if (d !== 'pglite' && d !== 'postgres') throw new Error(`BENCH_DATABASES: unknown database '${d}' (pglite, postgres)`);
    if (d === 'postgres' && !env.DATABASE_URL) throw new Error('BENCH_DATABASES names postgres but DATABASE_URL is not set');
  }
  const peer = peerConfig();
  const passes = [];
  for (const [i, database] of databases.entries()) {
    if (i > 0) console.log('');
    passes.push(await measure(database, peer));
  }
  const outDir = path.join(here, 'results');
  mkdirSync(outDir, { recursive: true });
  const report = {
    at: new Date().toISOString(),
    rateLimitStore: env.REDIS_URL ? 'redis' : 'memory',
    node: process.version,
    cpus: os.cpus().length,
    serverNodeFlags: SERVER_NODE_FLAGS,
    ...settings,
    peer: peer ? peer.cases.map((c) => ({ case: c.scenario, url: c.url })) : null,
    databases: passes,
  };
  writeFileSync(path.join(outDir, 'latest.json'), `${JSON.stringify(report, null, 2)}\n`);
  console.log(`\nwrote ${path.relative(process.cwd(), path.join(outDir, 'latest.json'))}`);
}

// `npm run bench -- --soak`: the soak run instead (bench/soak.mjs).
if (process.argv.includes('--soak')) process.exit(await (await import('./soak.mjs')).runSoak());

let status = 0;
try {
  await main();
} catch (e) {
  console.error(`bench failed: ${e.stack ?? e}`);
  status = 1;
} finally {
  await cleanUp();
}
process.exit(status);
