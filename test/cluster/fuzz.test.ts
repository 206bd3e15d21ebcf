import fc from 'fast-check';
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkResponse, fuzzRequest, fuzzSeed, type FuzzRequest, type FuzzResponse } from '../helpers/fuzz.js';
import { call, memberWithKey, setSettings, startCluster, type Cluster, type Node } from './harness.js';

// At least 10,000 random requests over real HTTP to two server processes on PostgreSQL, Redis and S3;
// the 1,000-request run through app.inject is test/api/fuzz.test.ts.
const RUNS = Number(process.env.FUZZ_RUNS ?? 1350);
const BATCH = 8;

function send(node: Node, req: FuzzRequest): Promise<FuzzResponse | null> {
  return new Promise((resolve, reject) => {
    let r: http.ClientRequest;
    try {
      r = http.request({ host: '127.0.0.1', port: node.port, method: req.method, path: req.url, headers: req.headers, agent: false }, (res) => {
        const parts: Buffer[] = [];
        res.on('data', (d: Buffer) => parts.push(d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(parts).toString('utf8') }));
        res.on('error', reject);
      });
    } catch {
      // Not sendable (an invalid header value or path): nothing reached the server.
      resolve(null);
      return;
    }
    r.on('error', (e: NodeJS.ErrnoException) => {
      if (e.code === 'ECONNRESET' || e.code === 'EPIPE') return resolve({ status: 0, headers: {}, body: '' });
      if (e.code?.startsWith('HPE_')) return resolve({ status: -1, headers: {}, body: `${e.code}: ${(e as { rawPacket?: Buffer }).rawPacket?.toString('latin1').slice(0, 600)}` });
      reject(e);
    });
    r.end(req.body);
  });
}

describe('fuzzing two server processes', () => {
  let c: Cluster;
  let principals: Array<Record<string, string>>;
  beforeAll(async () => {
    c = await startCluster(2);
    await setSettings(c, { api_require_https: false, drive_active: true, api_rate_limit_requests: 1_000_000, api_auth_rate_limit_requests: 1_000_000 });
    principals = [(await memberWithKey(c)).headers, (await memberWithKey(c, 5)).headers];
  });
  afterAll(async () => c?.close());

  it(`answers ${RUNS * BATCH} random requests (at least 10,000 sendable) without a 5xx or a leak, with the envelope on /api/v1/, both nodes alive`, async () => {
    const seed = fuzzSeed('fuzz (two server processes)');
    let sent = 0;
    let unsendable = 0;
    let cut = 0;
    const unparsable: string[] = [];
    const statuses = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(fc.array(fuzzRequest({ principals }), { minLength: BATCH, maxLength: BATCH }), async (batch) => {
        const replies = await Promise.all(batch.map((req, i) => send(c.nodes[i % 2]!, req)));
        batch.forEach((req, i) => {
          const res = replies[i]!;
          if (res === null) return void unsendable++;
          sent++;
          // A connection the server closed on an oversized or broken body (status 0) is an answer too.
          if (res.status === 0) return void cut++;
          if (res.status === -1) {
            unparsable.push(`${req.method} ${req.url.slice(0, 80)} -> ${res.body}`);
            return;
          }
          statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
          const problem = checkResponse(req, res);
          if (problem && res.status >= 500) {
            // The node's own log line for that request says what went wrong.
            const ref = /\(ref (req-\d+)\)/.exec(res.body)?.[1];
            const log = c.nodes[i % 2]!.process.output().split('\n').filter((l) => ref && l.includes(`"reqId":"${ref}"`) && l.includes('"level":50'));
            expect(`${problem}\n${log.join('\n').slice(0, 3000)}`).toBe('');
          }
          expect(problem).toBe('');
        });
      }),
      { seed, numRuns: RUNS, endOnFailure: true },
    );
    console.log(`fuzz (two server processes): ${sent} requests sent (${cut} connections cut by the server), ${unsendable} not sendable; statuses ${JSON.stringify(Object.fromEntries(statuses))}`);
    // Known and open (see the issue 31 report): a lowercase-method request with a body and a bad URL gets
    // its 400, Connection: close, and then a second 400 for the unread body bytes; Node's client calls
    // that HPE_CLOSED_CONNECTION. Anything else the client cannot parse fails the run.
    const closedTwice = unparsable.filter((u) => u.includes('HPE_CLOSED_CONNECTION'));
    console.log(`answers the client could not parse: ${unparsable.length} (${closedTwice.length} a second answer after Connection: close)${unparsable[0] ? `; first: ${unparsable[0].slice(0, 200)}` : ''}`);
    expect(unparsable.filter((u) => !u.includes('HPE_CLOSED_CONNECTION'))).toEqual([]);
    if (!process.env.FUZZ_RUNS) expect(sent).toBeGreaterThanOrEqual(10_000);
    for (const node of c.nodes) {
      expect(node.process.child.exitCode).toBeNull();
      expect((await call(node, 'GET', '/api/v1/auth/session', { headers: principals[0] })).status).toBe(200);
    }
    expect(c.nodes.map((n) => n.process.output()).join('\n')).not.toMatch(/"level":50[^\n]*"msg":"unexpected error"/);
  }, 600_000);
});
