#!/usr/bin/env node
// Drive upload benchmark (issues 25 and 41), not a test: a 1 GB file sent in 8 MiB chunks to the real
// server (bench/drive-upload-server.mjs, its own process, PGlite and the fs blob store in a scratch
// directory) against a peer, the reference resumable-upload server for Node (tus: bench/drive-upload-tus.mjs,
// the same client behaviour, the same disk), and against `cp` of the same file, measured side by side in
// one run, in alternating rounds (cp, upload, tus, cp + sync, then the plain node:http floors and ceilings
// of bench/drive-upload-bare.mjs), each step after an untimed `sync` so no step pays for the previous one's
// dirty pages. Medians of the rounds are reported, and each round's own ratios. Targets (reported, not
// asserted): the upload reaches at least tus's MiB/s (1.0x) and 0.8 of the bare:hash ceiling, and the
// server's RSS grows by less than 64 MB while it receives it. See bench/README.md for what each figure means.
//
//   npm run build && node bench/drive-upload.mjs
//   BENCH_SIZE_MB=256 BENCH_ROUNDS=3 BENCH_DIR=/some/disk node bench/drive-upload.mjs
import { execFileSync, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, open, rm } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;
const SIZE = Number(process.env.BENCH_SIZE_MB ?? 1024) * MiB;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const SETTLE_MS = Number(process.env.BENCH_SETTLE_MS ?? 3000);
const CHUNK = 8 * MiB;
const RSS_TARGET = 64 * MiB;
const here = path.dirname(fileURLToPath(import.meta.url));

const dir = process.env.BENCH_DIR ? path.resolve(process.env.BENCH_DIR) : await mkdtemp(path.join(os.tmpdir(), 'gh-drive-bench-'));
await mkdir(dir, { recursive: true });
const source = path.join(dir, 'source.bin');

async function makeSource() {
  const hash = createHash('sha256');
  const out = createWriteStream(source);
  for (let written = 0; written < SIZE; written += CHUNK) {
    const block = randomBytes(Math.min(CHUNK, SIZE - written));
    hash.update(block);
    if (!out.write(block)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
  return hash.digest('hex');
}

const sync = () => execFileSync('sync');

const TICK = 100; // USER_HZ: /proc's clock ticks per second on Linux
/** CPU seconds (user + system) from /proc/<pid>/stat: a process (all its threads), or its waited-for children. */
function cpuSeconds(statPath, children = false) {
  const fields = readFileSync(statPath, 'utf8').replace(/^.*\) /, '').split(' ');
  // After the command: fields[11..14] are utime, stime, cutime, cstime (stat fields 14..17).
  return (children ? Number(fields[13]) + Number(fields[14]) : Number(fields[11]) + Number(fields[12])) / TICK;
}

/**
 * Runs one step after an untimed sync: its wall seconds and the CPU seconds it cost, by whom: this
 * process (the client, every thread), the server's main (JavaScript) thread and the whole server
 * process (with its libuv pool), and commands run meanwhile (cp, sync).
 */
async function measure(fn, serverPid) {
  sync();
  const before = { client: process.cpuUsage(), commands: cpuSeconds('/proc/self/stat', true) };
  if (serverPid) Object.assign(before, { main: cpuSeconds(`/proc/${serverPid}/task/${serverPid}/stat`), server: cpuSeconds(`/proc/${serverPid}/stat`) });
  const start = process.hrtime.bigint();
  await fn();
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  const client = process.cpuUsage(before.client);
  const cpu = { client: (client.user + client.system) / 1e6, commands: cpuSeconds('/proc/self/stat', true) - before.commands };
  if (serverPid) Object.assign(cpu, { server_main_thread: cpuSeconds(`/proc/${serverPid}/task/${serverPid}/stat`) - before.main, server: cpuSeconds(`/proc/${serverPid}/stat`) - before.server });
  return { seconds, cpu };
}

/** cp of the source to `target` (kept until the round ends), optionally followed by sync of the copy. */
function cp(target, withSync) {
  return measure(() => {
    execFileSync('cp', [source, target]);
    if (withSync) execFileSync('sync', [target]);
  });
}

/** SHA-256 in this process over 1 MiB updates (as the server hashes socket reads): MiB/s. */
function hashRate() {
  const block = randomBytes(MiB);
  const hash = createHash('sha256');
  const start = process.hrtime.bigint();
  for (let n = 0; n < 512; n++) hash.update(block);
  hash.digest();
  return 512 / (Number(process.hrtime.bigint() - start) / 1e9);
}

function rssOf(pid) {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : 0;
}

/** The node flags of `npm start`, so the server runs as it does in production. */
const NODE_FLAGS = JSON.parse(readFileSync(path.join(here, '..', 'package.json'), 'utf8')).scripts.start.split(/\s+/).filter((w) => w.startsWith('--'));

async function startServer(script) {
  const profile = process.env.BENCH_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE}`] : [];
  const extra = process.env.BENCH_NODE_FLAGS ? process.env.BENCH_NODE_FLAGS.split(/\s+/) : [];
  const child = spawn(process.execPath, [...NODE_FLAGS, ...extra, ...profile, path.join(here, script)], {
    env: { ...process.env, BENCH_DATA_DIR: path.join(dir, 'data'), BENCH_BARE_DIR: dir },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  // The first JSON line says where it listens; anything else it prints (--trace-gc) goes to stderr.
  const hello = await new Promise((resolve, reject) => {
    createInterface({ input: child.stdout }).on('line', (line) => (line.startsWith('{') ? resolve(JSON.parse(line)) : console.error(line)));
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code}`)));
  });
  return { child, ...hello };
}

async function stopServer(server) {
  server.child.kill('SIGTERM');
  await once(server.child, 'exit').catch(() => {});
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

function call(server, method, urlPath, { body, headers = {} } = {}) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port: server.port, method, path: urlPath, agent, headers: { ...server.headers, ...headers } }, (res) => {
      const parts = [];
      res.on('data', (c) => parts.push(c));
      res.on('end', () => {
        const text = Buffer.concat(parts).toString('utf8');
        if (res.statusCode !== 200) reject(new Error(`${method} ${urlPath}: ${res.statusCode} ${text}`));
        else resolve(JSON.parse(text));
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** A request whose status (not a JSON body) is the answer: tus answers 201 and 204 with headers only. */
function rawCall(server, method, urlPath, { body, headers = {}, expect }) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port: server.port, method, path: urlPath, agent, headers }, (res) => {
      res.resume();
      res.on('end', () => (res.statusCode === expect ? resolve(res.headers) : reject(new Error(`${method} ${urlPath}: ${res.statusCode}`))));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const action = (server, name, body) =>
  call(server, 'POST', `/api/v1/action/${name}`, { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });

/**
 * Sends the first `size` bytes of the source as chunks, one after another (the contract serialises them),
 * as a client that reads its file in whole chunks would: each chunk is read with one positional read into
 * one of two buffers while the previous chunk is on the wire, and sent as one body on a kept-alive
 * connection. No hashing: the /drive page sends no sha256 at init either (the server computes its own).
 * Returns each chunk's request time in ms.
 */
async function sendChunks(server, size, pathFor, headersFor = () => ({}), send = (p, body, headers) => call(server, 'PUT', p, { body, headers })) {
  const fh = await open(source, 'r');
  const buffers = [Buffer.allocUnsafe(CHUNK), Buffer.allocUnsafe(CHUNK)];
  const read = async (start, i) => {
    const length = Math.min(CHUNK, size - start);
    for (let got = 0; got < length; ) {
      const { bytesRead } = await fh.read(buffers[i], got, length - got, start + got);
      if (bytesRead === 0) throw new Error('the source is shorter than expected');
      got += bytesRead;
    }
    return buffers[i].subarray(0, length);
  };
  const times = [];
  try {
    let next = read(0, 0);
    for (let start = 0, i = 0; start < size; start += CHUNK, i ^= 1) {
      const body = await next;
      const t = process.hrtime.bigint();
      const sent = send(pathFor(start), body, { 'content-length': String(body.length), ...headersFor(start, start + body.length - 1) });
      if (start + CHUNK < size) next = read(start + CHUNK, i ^ 1);
      await sent;
      times.push(Number(process.hrtime.bigint() - t) / 1e6);
    }
  } finally {
    await fh.close();
  }
  return times;
}

/** One upload to Gatehouse: init, the chunks, complete. */
async function upload(server, size, name) {
  const init = await action(server, 'drive_upload_init', { name, size_bytes: size });
  if (init.data.deduped) throw new Error('the upload was deduplicated, not sent');
  const token = init.data.upload_token;
  const chunkMs = await sendChunks(server, size, () => `/api/v1/drive_upload/${token}`, (start, end) => ({
    'content-type': 'application/octet-stream',
    'content-range': `bytes ${start}-${end}/${size}`,
  }));
  const t = process.hrtime.bigint();
  const file = (await action(server, 'drive_upload_complete', { upload_token: token })).data.file;
  return { file, chunkMs, completeMs: Number(process.hrtime.bigint() - t) / 1e6 };
}

/**
 * One upload to tus, as its protocol has it: POST creates the upload (Upload-Length), then one PATCH per
 * chunk at its Upload-Offset, on the same connection, with the same chunks read the same way.
 */
async function tusUpload(server, size) {
  const TUS = { 'tus-resumable': '1.0.0' };
  const created = await rawCall(server, 'POST', '/files', { headers: { ...TUS, 'upload-length': String(size) }, expect: 201 });
  const location = new URL(created.location, 'http://127.0.0.1').pathname;
  const chunkMs = await sendChunks(server, size, () => location, (start) => ({ ...TUS, 'content-type': 'application/offset+octet-stream', 'upload-offset': String(start) }),
    (p, body, headers) => rawCall(server, 'PATCH', p, { body, headers, expect: 204 }));
  return { id: path.basename(location), chunkMs };
}

/** Frees what an upload stored, so every round stores the same bytes anew. */
async function remove(server, file) {
  await action(server, 'drive_trash', { file_id: file.file_id });
  await action(server, 'drive_delete_forever', { file_id: file.file_id });
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const mb = (bytes) => +(bytes / MiB).toFixed(1);
const rate = (s) => SIZE / MiB / s;
const r1 = (x) => +x.toFixed(1);
const r2 = (x) => +x.toFixed(2);

console.error(`drive-upload bench: ${mb(SIZE)} MiB in ${mb(CHUNK)} MiB chunks, ${ROUNDS} rounds, scratch ${dir}`);
const sha256 = await makeSource();
await rm(path.join(dir, 'data'), { recursive: true, force: true });
sync();
const server = await startServer('drive-upload-server.mjs');
const bare = await startServer('drive-upload-bare.mjs');
const tus = await startServer('drive-upload-tus.mjs');
try {
  // Warm-up: load and compile both upload paths, then take the server's resting RSS.
  const warm = await upload(server, 3 * CHUNK, 'warm.bin');
  await remove(server, warm.file);
  for (const mode of ['file', 'hash', 'null']) await sendChunks(bare, 3 * CHUNK, (start) => `/${mode}/bare-warm.bin/${start}`);
  const tusWarm = await tusUpload(tus, 3 * CHUNK);
  await rm(path.join(dir, 'tus'), { recursive: true, force: true });
  void tusWarm;
  await rm(path.join(dir, 'bare-warm.bin'), { force: true });
  await new Promise((r) => setTimeout(r, 1000));
  const restingRss = rssOf(server.pid);
  let peakRss = restingRss;

  const rounds = [];
  const header = 'round     cp cp+sync gatehouse   tus bare:file bare:hash bare:null sha256 (MiB/s) | gatehouse/tus gatehouse/bare:hash gatehouse/cp | CPU s/GiB: gatehouse server (main thread), tus server (main thread), client';
  console.error(header);
  for (let round = 1; round <= ROUNDS; round++) {
    const r = {};
    // Every step writes a new file; what a round wrote is deleted only once it ends, then the disk is
    // left to settle (ext4 here is mounted with online discard: a step right after a 1 GB delete is
    // measurably slower, whichever step it is).
    const written = [path.join(dir, `cp-${round}.bin`), path.join(dir, `cp-sync-${round}.bin`), path.join(dir, `bare-${round}.bin`)];
    const steps = {};
    steps.cp = await cp(written[0], false);
    let result;
    const sampler = setInterval(() => (peakRss = Math.max(peakRss, rssOf(server.pid))), 25);
    steps.gatehouse = await measure(async () => {
      result = await upload(server, SIZE, `big-${round}.bin`);
    }, server.pid);
    clearInterval(sampler);
    peakRss = Math.max(peakRss, rssOf(server.pid));
    if (result.file.sha256 !== sha256 || result.file.size_bytes !== SIZE) throw new Error(`the stored file is not the source: ${JSON.stringify(result.file)}`);
    let tusResult;
    steps.tus = await measure(async () => (tusResult = await tusUpload(tus, SIZE)), tus.pid);
    steps.cp_sync = await cp(written[1], true);
    let bareMs;
    steps.bare_file = await measure(async () => (bareMs = await sendChunks(bare, SIZE, (start) => `/file/bare-${round}.bin/${start}`)), bare.pid);
    steps.bare_hash = await measure(() => sendChunks(bare, SIZE, (start) => `/hash/-/${start}`), bare.pid);
    steps.bare_null = await measure(() => sendChunks(bare, SIZE, (start) => `/null/-/${start}`), bare.pid);
    r.sha256 = hashRate();
    await remove(server, result.file);
    await rm(path.join(dir, 'tus'), { recursive: true, force: true });
    for (const file of written) await rm(file, { force: true });
    sync();
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    for (const [name, step] of Object.entries(steps)) {
      r[name] = rate(step.seconds);
      for (const [who, cpu] of Object.entries(step.cpu)) r[`${name}_cpu_${who}`] = cpu / (SIZE / GiB);
    }
    r.gatehouse_chunk_ms = median(result.chunkMs);
    r.bare_file_chunk_ms = median(bareMs);
    r.tus_chunk_ms = median(tusResult.chunkMs);
    r.ratio_tus = r.gatehouse / r.tus;
    r.ratio_ceiling = r.gatehouse / r.bare_hash;
    r.complete_ms = result.completeMs;
    r.ratio_cp = r.gatehouse / r.cp;
    r.ratio_cp_sync = r.gatehouse / r.cp_sync;
    r.ceiling_cp = r.bare_hash / r.cp;
    r.ceiling_cp_sync = r.bare_hash / r.cp_sync;
    rounds.push(r);
    const f = (x, w = 8) => String(Math.round(x)).padStart(w);
    const c = (x) => x.toFixed(2);
    console.error(
      `${String(round).padStart(5)} ${f(r.cp, 6)}${f(r.cp_sync)}${f(r.gatehouse, 10)}${f(r.tus, 6)}${f(r.bare_file, 10)}${f(r.bare_hash, 10)}${f(r.bare_null, 10)}${f(r.sha256, 7)}         | ` +
        `${c(r.ratio_tus).padStart(13)} ${c(r.ratio_ceiling).padStart(18)} ${c(r.ratio_cp).padStart(12)} | ` +
        `${c(r.gatehouse_cpu_server)} (${c(r.gatehouse_cpu_server_main_thread)}), ${c(r.tus_cpu_server)} (${c(r.tus_cpu_server_main_thread)}), ${c(r.gatehouse_cpu_client)}`,
    );
  }

  const med = (key, round = r1) => round(median(rounds.map((r) => r[key])));
  const cpu = (step) => Object.fromEntries(Object.keys(rounds[0]).filter((k) => k.startsWith(`${step}_cpu_`)).map((k) => [k.slice(step.length + 5), med(k, r2)]));
  // CPU seconds per GiB do not depend on how busy the machine is (wall times do, by a factor of several
  // on this shared 2-vCPU machine): the ceiling of any Node server that must SHA-256 every byte it
  // receives is one GiB per (main-thread seconds per GiB) on a core of its own, and cp's is one GiB per
  // its CPU seconds per GiB.
  const cpCpu = median(rounds.map((r) => r.cp_cpu_commands));
  const ceilingCpu = cpCpu / median(rounds.map((r) => r.bare_hash_cpu_server_main_thread));
  const gatehouseCpu = cpCpu / median(rounds.map((r) => r.gatehouse_cpu_server_main_thread));
  const result = {
    size_bytes: SIZE,
    chunk_bytes: CHUNK,
    rounds: ROUNDS,
    median_mib_s: {
      cp: med('cp'),
      cp_then_sync: med('cp_sync'),
      gatehouse_upload: med('gatehouse'),
      tus_upload: med('tus'),
      bare_node_http_hash_to_file: med('bare_file'),
      bare_node_http_hash_only: med('bare_hash'),
      bare_node_http_discard: med('bare_null'),
      sha256_one_thread: med('sha256'),
    },
    median_ratio: {
      gatehouse_to_tus: med('ratio_tus', r2),
      gatehouse_to_ceiling_hash_only: med('ratio_ceiling', r2),
      gatehouse_to_cp: med('ratio_cp', r2),
      gatehouse_to_cp_then_sync: med('ratio_cp_sync', r2),
      ceiling_hash_only_to_cp: med('ceiling_cp', r2),
      ceiling_hash_only_to_cp_then_sync: med('ceiling_cp_sync', r2),
    },
    median_cpu_seconds_per_gib: {
      cp: cpu('cp'),
      cp_then_sync: cpu('cp_sync'),
      gatehouse_upload: cpu('gatehouse'),
      tus_upload: cpu('tus'),
      bare_node_http_hash_to_file: cpu('bare_file'),
      bare_node_http_hash_only: cpu('bare_hash'),
      bare_node_http_discard: cpu('bare_null'),
    },
    cpu_bound_ratio: {
      ceiling_hash_only_to_cp: r2(ceilingCpu),
      gatehouse_to_cp: r2(gatehouseCpu),
    },
    rounds_ratio_gatehouse_to_tus: rounds.map((r) => r2(r.ratio_tus)),
    rounds_ratio_gatehouse_to_ceiling_hash_only: rounds.map((r) => r2(r.ratio_ceiling)),
    rounds_ratio_gatehouse_to_cp: rounds.map((r) => r2(r.ratio_cp)),
    rounds_ratio_gatehouse_to_cp_then_sync: rounds.map((r) => r2(r.ratio_cp_sync)),
    median_chunk_ms: { gatehouse: med('gatehouse_chunk_ms'), tus: med('tus_chunk_ms'), bare_node_http_hash_to_file: med('bare_file_chunk_ms') },
    median_complete_ms: med('complete_ms'),
    server_rss_resting_mib: mb(restingRss),
    server_rss_peak_mib: mb(peakRss),
    server_rss_growth_mib: mb(peakRss - restingRss),
    // Each with the rounds that met it (the median of the rounds' paired ratios decides).
    targets: {
      rss_growth_under_64_mib: peakRss - restingRss < RSS_TARGET,
      at_least_tus_throughput: median(rounds.map((r) => r.ratio_tus)) >= 1.0,
      at_least_tus_throughput_rounds_met: rounds.filter((r) => r.ratio_tus >= 1.0).length,
      at_least_0_8_of_hash_only_ceiling: median(rounds.map((r) => r.ratio_ceiling)) >= 0.8,
      at_least_0_8_of_hash_only_ceiling_rounds_met: rounds.filter((r) => r.ratio_ceiling >= 0.8).length,
    },
    load_average: os.loadavg().map(r2),
  };
  console.log(JSON.stringify(result, null, 2));
} finally {
  await stopServer(server);
  await stopServer(bare);
  await stopServer(tus);
  agent.destroy();
  await rm(process.env.BENCH_DIR ? path.join(dir, 'data') : dir, { recursive: true, force: true });
}
