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

const here = path.dirname(fileURLToPath(import.meta.url));
const env = process.env;
const settings = {
  durationSeconds: Number(env.BENCH_DURATION ?? 5),
  warmupSeconds: Number(env.BENCH_WARMUP ?? 1),
  connections: Number(env.BENCH_CONNECTIONS ?? 50),
  rounds: Number(env.BENCH_ROUNDS ?? 5),
};

// ---- What to measure. A scenario names the server it loads and the baseline it is compared with. ----
// `headers` may be a function of the credentials the gatehouse server and a login produced:
//   { machineKey: {public_key, secret_key}, sessionKey: {public_key, secret_key}, userId, gatedPostId }
// `path` may be a function of the credentials too (the gated post's id comes from the server).
const BARE = 'bare Fastify JSON';
const SELECT = 'bare Fastify + 1 PK SELECT';
const PUBLIC_POST = 'GET Post/{id}, tierless member';
const GATED_POST = 'GET Post/{gated id}, tierless member';
const PAGE_OF_20 = 'GET Posts?numperpage=20, tierless member';
const allScenarios = [
  { name: BARE, target: 'bare', method: 'GET', path: '/hello', expect: 200 },
  { name: SELECT, target: 'select', method: 'GET', path: '/item/1', expect: 200 },
  { name: '404 unauthenticated', target: 'gatehouse', method: 'GET', path: '/api/v1/nope', expect: 404, baseline: BARE },
  { name: 'GET auth/session, session key', target: 'gatehouse', method: 'GET', path: '/api/v1/auth/session', headers: (c) => c.sessionKey, expect: 200, baseline: SELECT },
  { name: 'GET auth/session, machine key', target: 'gatehouse', method: 'GET', path: '/api/v1/auth/session', headers: (c) => c.machineKey, expect: 200, baseline: 'GET auth/session, session key' },
  // The three cases of BENCH_PEER (a member without a tier, signed in: a session key).
  { name: PUBLIC_POST, target: 'gatehouse', method: 'GET', path: '/api/v1/Post/1', headers: (c) => c.sessionKey, expect: 200, baseline: SELECT, peer: 'public post' },
  { name: GATED_POST, target: 'gatehouse', method: 'GET', path: (c) => `/api/v1/Post/${c.gatedPostId}`, headers: (c) => c.sessionKey, expect: 200, baseline: SELECT, peer: 'gated post' },
  { name: PAGE_OF_20, target: 'gatehouse', method: 'GET', path: '/api/v1/Posts?numperpage=20', headers: (c) => c.sessionKey, expect: 200, baseline: SELECT, peer: 'page of 20' },
];

// Targets are reported, never asserted. `of` is the scenario the ratio is taken against.
const goals = [
  { goal: '404 >= 50% of bare Fastify', scenario: '404 unauthenticated', of: BARE, min: 0.5 },
  { goal: 'machine-key session read within 15% of session-key', scenario: 'GET auth/session, machine key', of: 'GET auth/session, session key', min: 0.85 },
  { goal: 'session-key read >= 50% of one-SELECT baseline (PostgreSQL)', scenario: 'GET auth/session, session key', of: SELECT, min: 0.5, databases: ['postgres'] },
  { goal: 'GET Post/{id} >= 40% of one-SELECT baseline (PostgreSQL)', scenario: PUBLIC_POST, of: SELECT, min: 0.4, databases: ['postgres'] },
  { goal: 'GET Posts?numperpage=20 >= 25% of one-SELECT baseline (PostgreSQL)', scenario: PAGE_OF_20, of: SELECT, min: 0.25, databases: ['postgres'] },
];
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

function startServer(mode, extraEnv) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...SERVER_NODE_FLAGS, path.join(here, 'server.mjs'), mode], {
      env: { ...env, ...extraEnv },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    children.add(child);
    child.once('exit', (code) => {
      children.delete(child);
      reject(new Error(`${mode} server exited with ${code} before it was ready`));
    });
    // The real server may log (warn and above) before its ready line; that line is the JSON with `mode`.
    const lines = createInterface({ input: child.stdout });
    lines.on('line', function ready(line) {
      if (!line.startsWith('{"mode"')) return;
      lines.off('line', ready);
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

/** A scratch PostgreSQL database for this run, dropped at the end. */
async function scratchPostgres(url) {
  const name = `gh_bench_${process.pid}_${Date.now()}`;
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
  const selected = scenarios.filter((s) => !only || only.test(s.name));
  // A selected scenario brings its baseline, and that baseline its own.
  const wanted = new Set();
  const byName = new Map(scenarios.map((s) => [s.name, s]));
  for (let s of selected) for (; s && !wanted.has(s.name); s = byName.get(s.baseline)) wanted.add(s.name);
  const plan = scenarios.filter((s) => wanted.has(s.name));

  const databaseUrl = database === 'postgres' ? await scratchPostgres(env.DATABASE_URL) : undefined;
  // The PGlite pass blanks DATABASE_URL, which the servers would otherwise inherit from this process.
  const dbEnv = (label) => (databaseUrl ? { DATABASE_URL: databaseUrl } : { DATABASE_URL: '', BENCH_DATA_DIR: scratchDir(label) });
  const servers = {};
  // One at a time, so that no server's start-up (migrations) competes with another's.
  const profileEnv = (target) => (env.BENCH_PROFILE ? { BENCH_CPU_PROFILE: path.join(here, 'results', `${target}.cpuprofile`) } : {});
  mkdirSync(path.join(here, 'results'), { recursive: true });
  if (peer) servers.peer = { url: '', child: { pid: peer.pid } };
  for (const target of new Set(plan.map((s) => s.target).filter((t) => t !== 'peer'))) servers[target] = await startServer(target, { ...dbEnv(target), ...profileEnv(target) });
  const credentials = servers.gatehouse
    ? {
        userId: servers.gatehouse.user_id,
        gatedPostId: servers.gatehouse.gated_post_id,
        machineKey: { public_key: servers.gatehouse.public_key, secret_key: servers.gatehouse.secret_key },
        sessionKey: await login(servers.gatehouse),
      }
    : {};

  const loadBefore = os.loadavg()[0];
  console.log(
    `database: ${database}; rate-limit store: ${env.REDIS_URL ? 'redis' : 'memory'}; ${settings.connections} connections, ` +
      `${settings.warmupSeconds} s warm-up + ${settings.durationSeconds} s per scenario, ${settings.rounds} rounds (each ratio paired within a round; medians reported); node ${process.version}; ${os.cpus().length} CPUs`,
  );
  const prepared = [];
  for (const s of plan) {
    const server = servers[s.target];
    const headers = typeof s.headers === 'function' ? s.headers(credentials) : (s.headers ?? {});
    const urlPath = typeof s.path === 'function' ? s.path(credentials) : s.path;
    // One request first: a scenario that answers the wrong status measures the wrong thing.
    const probe = await fetch(server.url + urlPath, { method: s.method, headers });
    await probe.arrayBuffer();
    if (probe.status !== s.expect) throw new Error(`${s.name}: expected ${s.expect}, got ${probe.status}`);
    prepared.push({ s, urlPath, load: { url: server.url + urlPath, method: s.method, headers, connections: settings.connections, durationSeconds: settings.durationSeconds } });
  }
  // Each round runs every compared scenario right after a fresh run of what it is compared with, so a
  // ratio divides two figures taken seconds apart: the machine's speed drifts by a factor of two over a
  // minute here, and a baseline measured half a round earlier would carry that drift into the ratio.
  const sequence = roundSequence(prepared);
  // The real server's memory: right after its (first) start, idle after the set-up, and its peak under load.
  const memory = servers.gatehouse ? { startMb: servers.gatehouse.rssAtStartMb } : undefined;
  const peerMemory = peer?.pid ? { startMb: null } : undefined;
  if (memory) {
    await new Promise((resolve) => setTimeout(resolve, IDLE_SETTLE_MS));
    memory.idleMb = rssMb(servers.gatehouse.child.pid);
    if (peerMemory) peerMemory.idleMb = rssMb(peer.pid);
  }
  const sampler = memory ? sampleRss(servers.gatehouse.child.pid) : undefined;
  const peerSampler = peerMemory ? sampleRss(peer.pid) : undefined;
  const runs = new Map(plan.map((s) => [s.name, []]));
  const pairedRatios = new Map(prepared.filter(({ s }) => s.baseline).map(({ s }) => [s.name, []]));
  for (let round = 1; round <= settings.rounds; round++) {
    console.log(`round ${round}/${settings.rounds}`);
    const latest = new Map();
    for (const { s, load } of sequence) {
      // Warm up before every run: the previous scenario may have been another server.
      sampler?.active(s.target === 'gatehouse');
      peerSampler?.active(s.target === 'peer');
      const r = await runLoad({ ...load, warmupSeconds: settings.warmupSeconds });
      sampler?.active(false);
      peerSampler?.active(false);
      runs.get(s.name).push(r);
      latest.set(s.name, r);
      const base = s.baseline ? latest.get(s.baseline) : undefined;
      if (base) pairedRatios.get(s.name).push(r.requestsPerSecond / base.requestsPerSecond);
      console.log(`  ${s.name.padEnd(38)} ${fmt(r.requestsPerSecond).padStart(8)} req/s${base ? `  ratio ${fmt(r.requestsPerSecond / base.requestsPerSecond, 2)}` : ''}`);
    }
  }
  if (memory) {
    memory.loadPeakMb = sampler.stop();
    memory.afterMb = rssMb(servers.gatehouse.child.pid);
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

  // The tail, per scenario of the real server: p99 of the median run against its p50, and requests over
  // 1 s summed over all rounds.
  const tails = [];
  for (const r of results.filter((x) => x.target === 'gatehouse')) {
    const ratio = r.latencyMs.p50 > 0 ? r.latencyMs.p99 / r.latencyMs.p50 : null;
    const met = ratio !== null && ratio < TAIL_P99_OVER_P50 && r.overOneSecond === 0;
    tails.push({ scenario: r.name, p50: r.latencyMs.p50, p99: r.latencyMs.p99, p99OverP50: ratio, overOneSecond: r.overOneSecond, met });
    console.log(`  ${met ? 'met    ' : 'MISSED '} tail of ${r.name}: p99 ${fmt(r.latencyMs.p99)} ms = ${ratio === null ? '-' : fmt(ratio, 1)}× p50 (under ${TAIL_P99_OVER_P50}×), ${fmt(r.overOneSecond)} over 1 s (none)`);
  }
  if (memory) {
    const worst = Math.max(memory.startMb, memory.idleMb, memory.loadPeakMb ?? 0);
    console.log(
      `  ${database === 'pglite' ? (worst < RSS_LIMIT_MB ? 'met     ' : 'MISSED  ') : ''}server RSS: ${fmt(memory.startMb)} MB at start, ${fmt(memory.idleMb)} MB idle, ` +
        `${fmt(memory.loadPeakMb)} MB peak under load, ${fmt(memory.afterMb)} MB after${database === 'pglite' ? ` (under ${RSS_LIMIT_MB} MB at every point on PGlite)` : ''}`,
    );
  }
  if (peerMemory) console.log(`          peer RSS: ${fmt(peerMemory.idleMb)} MB idle, ${fmt(peerMemory.loadPeakMb)} MB peak under load, ${fmt(peerMemory.afterMb)} MB after`);

  // Other work on the machine moves every number; say how busy it was.
  const loadAfter = os.loadavg()[0];
  console.log(`\nmachine load average (1 min): ${fmt(loadBefore, 1)} before, ${fmt(loadAfter, 1)} after, on ${os.cpus().length} CPUs`);
  // This database's servers leave before the next pass, so that they do not compete with its servers.
  await Promise.all(Object.values(servers).map((server) => stopServer(server)));
  return { database, loadAverage: { before: loadBefore, after: loadAfter }, results, goals: goalResults, tails, memory: memory ?? null, peerMemory: peerMemory ?? null };
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
