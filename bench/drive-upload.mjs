#!/usr/bin/env node
// Drive upload benchmark (issue 25), not a test: a 1 GB file sent in 8 MiB chunks to the real server
// (bench/drive-upload-server.mjs, its own process, PGlite and the fs blob store in a scratch directory)
// against `cp` of the same file on the same disk, measured side by side in one run: cp, the upload, cp
// again; then, as the floor, the same chunks to plain node:http with SHA-256 (bench/drive-upload-bare.mjs). Targets (reported, not asserted): the server's RSS grows by less than 64 MB while it receives
// the upload, and the upload reaches at least half of cp's throughput.
//
//   npm run build && node bench/drive-upload.mjs
//   BENCH_SIZE_MB=256 BENCH_DIR=/some/disk node bench/drive-upload.mjs
import { execFileSync, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const MiB = 1024 * 1024;
const SIZE = Number(process.env.BENCH_SIZE_MB ?? 1024) * MiB;
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

function seconds(fn) {
  const start = process.hrtime.bigint();
  fn();
  return Number(process.hrtime.bigint() - start) / 1e9;
}

function timeCp(sync) {
  const target = path.join(dir, 'copy.bin');
  const s = seconds(() => {
    execFileSync('cp', [source, target]);
    if (sync) execFileSync('sync', [target]);
  });
  execFileSync('rm', ['-f', target]);
  return s;
}

function rssOf(pid) {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : 0;
}

async function startServer(script = 'drive-upload-server.mjs') {
  const child = spawn(process.execPath, [...(process.env.BENCH_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE}`] : []), path.join(here, script)], {
    env: { ...process.env, BENCH_DATA_DIR: path.join(dir, 'data'), BENCH_BARE_FILE: path.join(dir, 'bare.bin') },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const [line] = await once(createInterface({ input: child.stdout }), 'line');
  return { child, ...JSON.parse(line) };
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

function call(server, method, urlPath, { body, headers = {}, file } = {}) {
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
    if (file) createReadStream(file.path, { start: file.start, end: file.end, highWaterMark: 1 * MiB }).pipe(req);
    else req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

const action = (server, name, body) => call(server, 'POST', `/api/v1/action/${name}`, { body, headers: { 'content-type': 'application/json' } });

async function upload(server, file, size, name) {
  const init = await action(server, 'drive_upload_init', { name, size_bytes: size });
  const token = init.data.upload_token;
  for (let start = 0; start < size; start += CHUNK) {
    const end = Math.min(start + CHUNK, size) - 1;
    const t = process.hrtime.bigint();
    await call(server, 'PUT', `/api/v1/drive_upload/${token}`, {
      headers: { 'content-type': 'application/octet-stream', 'content-range': `bytes ${start}-${end}/${size}`, 'content-length': String(end - start + 1) },
      file: { path: file, start, end },
    });
    if (process.env.BENCH_TRACE) console.error(`chunk ${start / CHUNK}: ${Number(process.hrtime.bigint() - t) / 1e6} ms`);
  }
  const t = process.hrtime.bigint();
  const done = (await action(server, 'drive_upload_complete', { upload_token: token })).data.file;
  if (process.env.BENCH_TRACE) console.error(`complete: ${Number(process.hrtime.bigint() - t) / 1e6} ms`);
  return done;
}

/** The same chunks to plain node:http (bench/drive-upload-bare.mjs): seconds. */
async function bareUpload() {
  const bare = await startServer('drive-upload-bare.mjs');
  try {
    const t = process.hrtime.bigint();
    for (let start = 0; start < SIZE; start += CHUNK) {
      const end = Math.min(start + CHUNK, SIZE) - 1;
      await call(bare, 'PUT', `/${start}`, { headers: { 'content-length': String(end - start + 1) }, file: { path: source, start, end } });
    }
    return Number(process.hrtime.bigint() - t) / 1e9;
  } finally {
    bare.child.kill('SIGTERM');
    await once(bare.child, 'exit').catch(() => {});
    await rm(path.join(dir, 'bare.bin'), { force: true });
  }
}

const mb = (bytes) => (bytes / MiB).toFixed(1);
const rate = (s) => SIZE / MiB / s;

console.error(`drive-upload bench: ${mb(SIZE)} MiB in ${mb(CHUNK)} MiB chunks, scratch ${dir}`);
const sha256 = await makeSource();
const server = await startServer();
try {
  // Warm-up: load and compile the upload path, then take the resting RSS.
  const warm = path.join(dir, 'warm.bin');
  const out = createWriteStream(warm);
  for await (const c of createReadStream(source, { end: 3 * CHUNK - 1 })) if (!out.write(c)) await once(out, 'drain');
  out.end();
  await once(out, 'finish');
  await upload(server, warm, 3 * CHUNK, 'warm.bin');
  await new Promise((r) => setTimeout(r, 1000));
  const restingRss = rssOf(server.pid);

  const cpBefore = timeCp(false);
  let peakRss = restingRss;
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, rssOf(server.pid))), 25);
  const t0 = process.hrtime.bigint();
  const file = await upload(server, source, SIZE, 'big.bin');
  const uploadSeconds = Number(process.hrtime.bigint() - t0) / 1e9;
  clearInterval(sampler);
  peakRss = Math.max(peakRss, rssOf(server.pid));
  const cpAfter = timeCp(false);
  const bareSeconds = await bareUpload();
  const cpSynced = timeCp(true);
  if (file.sha256 !== sha256 || file.size_bytes !== SIZE) throw new Error(`the stored file is not the source: ${JSON.stringify(file)}`);

  const cpSeconds = (cpBefore + cpAfter) / 2;
  const result = {
    size_bytes: SIZE,
    chunk_bytes: CHUNK,
    upload_seconds: +uploadSeconds.toFixed(2),
    upload_mib_s: +rate(uploadSeconds).toFixed(1),
    cp_seconds: [+cpBefore.toFixed(2), +cpAfter.toFixed(2)],
    cp_mib_s: +rate(cpSeconds).toFixed(1),
    cp_sync_mib_s: +rate(cpSynced).toFixed(1),
    throughput_ratio: +(cpSeconds / uploadSeconds).toFixed(2),
    bare_node_http_mib_s: +rate(bareSeconds).toFixed(1),
    bare_node_ratio_to_cp: +(cpSeconds / bareSeconds).toFixed(2),
    server_rss_resting_mib: +mb(restingRss),
    server_rss_peak_mib: +mb(peakRss),
    server_rss_growth_mib: +mb(peakRss - restingRss),
    targets: {
      rss_growth_under_64_mib: peakRss - restingRss < RSS_TARGET,
      at_least_half_cp_throughput: cpSeconds / uploadSeconds >= 0.5,
    },
    load_average: os.loadavg().map((x) => +x.toFixed(2)),
  };
  console.log(JSON.stringify(result, null, 2));
} finally {
  server.child.kill('SIGTERM');
  await once(server.child, 'exit').catch(() => {});
  agent.destroy();
  if (!process.env.BENCH_DIR) await rm(dir, { recursive: true, force: true });
}
