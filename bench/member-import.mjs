#!/usr/bin/env node
// Member CSV import benchmark (issue 39), not a test: BENCH_ROWS (100,000) generated rows in Ghost's
// member export columns, uploaded to the real server (bench/member-import-server.mjs, its own process,
// PGlite in a scratch directory) with purpose member_import, then member_import_run; the server's
// member_import task starts the job and the bench follows it with member_import_status. Meanwhile a reader
// keeps asking GET /auth/session (one request at a time) to show that reads stay served while the import
// runs in batches. Reported (targets not asserted): rows per second of the job (start to end as the job
// records them; the target is all rows in under 10 minutes), the server's peak RSS (VmHWM) and its RSS
// before the import, and the read latency before and during the import (p50, p99, max).
//
//   npm run build && node bench/member-import.mjs
//   BENCH_ROWS=20000 node bench/member-import.mjs
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const ROWS = Number(process.env.BENCH_ROWS ?? 100_000);
const here = path.dirname(fileURLToPath(import.meta.url));
const dir = await mkdtemp(path.join(os.tmpdir(), 'gh-member-bench-'));

function makeCsv() {
  const lines = ['id,email,name,note,subscribed_to_emails,complimentary_plan,stripe_customer_id,created_at,deleted_at,labels,tiers'];
  for (let i = 0; i < ROWS; i++) {
    const tier = i % 10 === 0 ? 'Gold Tier' : i % 4 === 0 ? 'silver' : '';
    const comp = i % 10 === 0 ? 'true' : 'false';
    lines.push(`${(0x5f000000 + i).toString(16)},member${i}@example.com,"Member ${i}, Jr",,${i % 3 === 0},${comp},,2024-01-01T00:00:00.000Z,,,${tier}`);
  }
  return Buffer.from(`${lines.join('\r\n')}\r\n`);
}

const status = (pid) => readFileSync(`/proc/${pid}/status`, 'utf8');
const kb = (text, field) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(text)?.[1] ?? 0) * 1024;
const mb = (bytes) => `${(bytes / 1024 / 1024).toFixed(0)} MB`;
const percentile = (sorted, p) => (sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]);

const server = spawn(process.execPath, ['--max-semi-space-size=8', '--heap-growing-percent=50', path.join(here, 'member-import-server.mjs')], {
  env: { ...process.env, BENCH_DATA_DIR: dir, LOG_LEVEL: 'warn' },
  stdio: ['ignore', 'pipe', 'inherit'],
});
const info = JSON.parse(await new Promise((resolve) => createInterface({ input: server.stdout }).once('line', resolve)));
const base = `http://127.0.0.1:${info.port}/api/v1`;
const headers = { ...info.headers, 'content-type': 'application/json' };

async function act(name, body) {
  const res = await fetch(`${base}/action/${name}`, { method: 'POST', headers, body: JSON.stringify(body) });
  const json = await res.json();
  if (res.status !== 200) throw new Error(`${name}: ${res.status} ${JSON.stringify(json)}`);
  return json.data;
}

/** Reads one at a time until stopped; each read's latency in ms. */
function reader() {
  const times = [];
  let stop = false;
  const done = (async () => {
    while (!stop) {
      const t0 = performance.now();
      const res = await fetch(`${base}/auth/session`, { headers: info.headers });
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`read: ${res.status}`);
      times.push(performance.now() - t0);
    }
  })();
  return async () => {
    stop = true;
    await done;
    return times.sort((a, b) => a - b);
  };
}
const describeReads = (t) => `${t.length} reads, p50 ${percentile(t, 0.5).toFixed(1)} ms, p99 ${percentile(t, 0.99).toFixed(1)} ms, max ${t.at(-1)?.toFixed(1)} ms`;

try {
  const csv = makeCsv();
  console.log(`member import bench: ${ROWS.toLocaleString()} rows, ${mb(csv.length)} CSV, PGlite in ${dir}`);
  const quiet = reader();
  await new Promise((r) => setTimeout(r, 3000));
  const before = await quiet();
  const opened = await act('drive_upload_init', { purpose: 'member_import', name: 'members.csv', mime_type: 'text/csv', size_bytes: csv.length, sha256: createHash('sha256').update(csv).digest('hex') });
  for (let start = 0; start < csv.length; start += opened.chunk_bytes) {
    const chunk = csv.subarray(start, start + opened.chunk_bytes);
    const res = await fetch(`${base}/drive_upload/${opened.upload_token}`, {
      method: 'PUT',
      headers: { ...info.headers, 'content-type': 'application/octet-stream', 'content-range': `bytes ${start}-${start + chunk.length - 1}/${csv.length}` },
      body: chunk,
    });
    if (res.status !== 200) throw new Error(`chunk: ${res.status} ${await res.text()}`);
  }
  const done = await act('drive_upload_complete', { upload_token: opened.upload_token });
  const rssBefore = kb(status(info.pid), 'VmRSS');
  const { job } = await act('member_import_run', { upload: done.file.id });
  const during = reader();
  let peakSampled = rssBefore;
  let last = job;
  let shown = 0;
  while (last.status !== 'done' && last.status !== 'failed') {
    await new Promise((r) => setTimeout(r, 250));
    peakSampled = Math.max(peakSampled, kb(status(info.pid), 'VmRSS'));
    last = (await act('member_import_status', { job_id: job.job_id })).job;
    if (Date.now() - shown > 5000) {
      shown = Date.now();
      process.stderr.write(`  ${last.status}: ${last.rows} rows, ${Math.round(last.progress * 100)}%, RSS ${mb(kb(status(info.pid), 'VmRSS'))}\n`);
    }
  }
  const reads = await during();
  if (last.status !== 'done') throw new Error(`the import failed: ${last.error}`);
  const seconds = (Date.parse(`${last.end_time}Z`) - Date.parse(`${last.start_time}Z`)) / 1000;
  const result = {
    rows: last.rows,
    counts: last.counts,
    seconds,
    rows_per_second: Math.round(last.rows / Math.max(seconds, 0.001)),
    under_10_minutes: seconds < 600,
    server_rss_before_import: rssBefore,
    server_rss_peak_sampled: peakSampled,
    server_vmhwm: kb(status(info.pid), 'VmHWM'),
    reads_before: { count: before.length, p50_ms: percentile(before, 0.5), p99_ms: percentile(before, 0.99), max_ms: before.at(-1) },
    reads_during: { count: reads.length, p50_ms: percentile(reads, 0.5), p99_ms: percentile(reads, 0.99), max_ms: reads.at(-1) },
  };
  console.log(`import: ${result.rows.toLocaleString()} rows in ${seconds.toFixed(1)} s = ${result.rows_per_second.toLocaleString()} rows/s (${JSON.stringify(result.counts)}); target under 10 minutes: ${result.under_10_minutes ? 'met' : 'MISSED'}`);
  console.log(`server RSS: ${mb(rssBefore)} before the import, ${mb(peakSampled)} peak sampled during it, VmHWM ${mb(result.server_vmhwm)}`);
  console.log(`reads before the import: ${describeReads(before)}`);
  console.log(`reads during the import: ${describeReads(reads)}`);
  mkdirSync(path.join(here, 'results'), { recursive: true });
  writeFileSync(path.join(here, 'results', 'member-import.json'), `${JSON.stringify(result, null, 2)}\n`);
} finally {
  server.kill('SIGTERM');
  await new Promise((r) => server.once('exit', r));
  await rm(dir, { recursive: true, force: true });
}
