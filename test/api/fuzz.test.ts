import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { checkResponse, fuzzRequest, fuzzSeed, type FuzzRequest } from '../helpers/fuzz.js';

// 1,000 random requests through the real app (app.inject): no 5xx, no leak, the envelope on every API
// answer, the app alive. The 10,000-request run against server processes is in `npm run test:cluster`.
const RUNS = Number(process.env.FUZZ_RUNS ?? 1000);

describe('fuzzing the API', () => {
  let t: TestApp;
  let principals: Array<Record<string, string>>;
  beforeAll(async () => {
    t = await createTestApp({ settings: { api_rate_limit_requests: 1_000_000, drive_active: true } });
    principals = [(await t.keyHeaders()).headers, (await t.staffHeaders()).headers];
  });
  afterAll(async () => t?.close());

  it('answers a URL whose percent-escapes do not decode with 400 in the envelope (found by the fuzzer)', async () => {
    const res = await t.request({ method: 'GET', url: '/api/v1/MailingList/%' });
    expect(res.statusCode).toBe(400);
    expect(res.json).toEqual({ api_version: '1.0', errortype: 'TransactionError', error: 'Malformed request URL', data: {} });
    const page = await t.request({ method: 'GET', url: '/drive/%zz' });
    expect(page.statusCode).toBe(400);
    expect(page.body).toBe('Bad request: malformed URL');
  });

  it(`answers ${RUNS} random requests without a 5xx, a stack trace, SQL or a file path, with the envelope on /api/v1/`, async () => {
    const seed = fuzzSeed('fuzz (app.inject)');
    let sent = 0;
    let refusedByClient = 0;
    const statuses = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(fuzzRequest({ principals }), async (req: FuzzRequest) => {
        let res;
        try {
          res = await t.app.inject({ method: req.method as never, url: req.url, headers: req.headers, ...(req.body ? { payload: req.body } : {}), remoteAddress: `10.77.${sent % 250}.${(sent >> 8) % 250}` });
        } catch {
          // Not sendable at all (an invalid header value): no request reached the server.
          refusedByClient++;
          return;
        }
        sent++;
        statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
        const problem = checkResponse(req, { status: res.statusCode, headers: res.headers as Record<string, string>, body: res.body });
        expect(problem).toBe('');
      }),
      { seed, numRuns: RUNS, endOnFailure: true },
    );
    console.log(`fuzz (app.inject): ${sent} requests answered, ${refusedByClient} not sendable; statuses ${JSON.stringify(Object.fromEntries(statuses))}`);
    expect(sent).toBeGreaterThan(RUNS * 0.9);
    const alive = await t.request({ method: 'GET', url: '/api/v1/auth/session', headers: principals[0] });
    expect(alive.statusCode).toBe(200);
  }, 300_000);
});
