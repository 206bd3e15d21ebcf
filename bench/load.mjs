#!/usr/bin/env node
// The load generator, in its own process so it does not share an event loop with any server.
// argv[2] is JSON: {url, method, headers, body, connections, warmupSeconds, durationSeconds, vary, purchase, editors}.
// Prints one JSON line. `vary` lists what changes from one request to the next (bench/vary.mjs): such a
// scenario's every request is built afresh by autocannon's setupRequest hook.
import autocannon from 'autocannon';
import { requestMaker } from './vary.mjs';

const o = JSON.parse(process.argv[2]);
/** Requests slower than this are counted one by one (the percentiles hide how many there were). */
const SLOW_MS = 1000;

const maker = o.vary?.length ? requestMaker(o.vary, { purchase: o.purchase, editors: o.editors }) : null;
// autocannon hands setupRequest the request it would send (method, path, headers, body, host...).
const requests = maker ? [{ setupRequest: (req) => maker.next(req) }] : undefined;
const base = { url: o.url, method: o.method, headers: o.headers, body: o.body, connections: o.connections, pipelining: 1, ...(requests ? { requests } : {}) };

if (o.warmupSeconds > 0) await autocannon({ ...base, duration: o.warmupSeconds });
const run = autocannon({ ...base, duration: o.durationSeconds });
let overOneSecond = 0;
run.on('response', (_client, _status, _bytes, responseTime) => {
  if (responseTime > SLOW_MS) overOneSecond++;
});
const r = await run;

const statusCodes = {};
for (const [code, { count }] of Object.entries(r.statusCodeStats ?? {})) statusCodes[code] = Number(count);
process.stdout.write(
  `${JSON.stringify({
    requestsPerSecond: r.requests.average,
    totalRequests: r.requests.total,
    durationSeconds: r.duration,
    latencyMs: { p50: r.latency.p50, p90: r.latency.p90, p99: r.latency.p99, max: r.latency.max },
    overOneSecond,
    statusCodes,
    errors: r.errors,
    timeouts: r.timeouts,
    // Buyers used (the warm-up's and those of requests built but not sent included): the next run starts after them.
    purchases: maker?.purchases ?? 0,
    shortOf: maker?.shortOf ?? 0,
  })}\n`,
);
