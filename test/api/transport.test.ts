import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { makeCertificate } from '../helpers/providers/x509.js';

const SECURITY = {
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'x-xss-protection': '1; mode=block',
  'referrer-policy': 'no-referrer',
};

function expectSecurityHeaders(headers: Record<string, unknown>) {
  for (const [k, v] of Object.entries(SECURITY)) expect(headers[k], k).toBe(v);
}

describe('transport stage', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ requireHttps: true, config: { trustProxy: ['10.0.0.1'] } });
  });
  afterAll(async () => t.close());

  it('refuses plain HTTP with 426 SecurityError under the default setting, with the security headers', async () => {
    const res = await t.request({ method: 'GET', url: '/api/v1/auth/session' });
    expect(res.statusCode).toBe(426);
    expect(res.json).toEqual({ api_version: '1.0', errortype: 'SecurityError', error: 'HTTPS is required', data: {} });
    expectSecurityHeaders(res.headers);
  });

  it('ignores a forged X-Forwarded-Proto from an untrusted address', async () => {
    const res = await t.request({ method: 'GET', url: '/api/v1/nope', remoteAddress: '10.9.9.9', headers: { 'x-forwarded-proto': 'https' } });
    expect(res.statusCode).toBe(426);
    expect(res.json.errortype).toBe('SecurityError');
  });

  it('believes X-Forwarded-Proto from a trusted proxy', async () => {
    const res = await t.request({ method: 'GET', url: '/api/v1/nope', remoteAddress: '10.0.0.1', headers: { 'x-forwarded-proto': 'https' } });
    expect(res.statusCode).toBe(404);
    expect(res.json).toMatchObject({ api_version: '1.0', errortype: 'NotFound', data: {} });
    expect(typeof res.json.error).toBe('string');
    expectSecurityHeaders(res.headers);
  });

  it('answers an unknown path under /api/v1 with 404 NotFound in the envelope once HTTPS is off', async () => {
    await t.services.settings.set('api_require_https', false);
    try {
      const res = await t.request({ method: 'DELETE', url: '/api/v1/no/such/thing' });
      expect(res.statusCode).toBe(404);
      expect(res.json.errortype).toBe('NotFound');
      expectSecurityHeaders(res.headers);
    } finally {
      await t.services.settings.set('api_require_https', true);
    }
  });
});

describe('security headers on every API response', () => {
  let t: TestApp;
  let machine: Record<string, string>;
  beforeAll(async () => {
    t = await createTestApp();
    machine = (await t.keyHeaders()).headers;
  });
  afterAll(async () => t.close());

  const cases: Array<[string, number, () => Parameters<TestApp['request']>[0]]> = [
    ['a success', 200, () => ({ method: 'GET', url: '/api/v1/auth/session', headers: machine })],
    ['a public success without credentials', 200, () => ({ method: 'GET', url: '/api/v1/actions' })],
    ['missing key headers', 400, () => ({ method: 'GET', url: '/api/v1/auth/session' })],
    ['a wrong secret', 401, () => ({ method: 'GET', url: '/api/v1/auth/session', headers: { public_key: machine.public_key!, secret_key: 'f'.repeat(64) }, remoteAddress: '198.51.100.201' })],
    ['a machine key on auth/logout', 403, () => ({ method: 'POST', url: '/api/v1/auth/logout', headers: machine })],
    ['a malformed JSON body', 400, () => ({ method: 'POST', url: '/api/v1/auth/login', headers: { 'content-type': 'application/json' }, payload: '{"email": ' })],
    ['an unsupported content type', 415, () => ({ method: 'POST', url: '/api/v1/auth/login', headers: { 'content-type': 'text/xml' }, payload: '<login/>' })],
    ['the bare prefix', 404, () => ({ method: 'GET', url: '/api/v1' })],
  ];
  for (const [name, status, request] of cases) {
    it(`carries all four on ${name} (${status})`, async () => {
      const res = await t.request(request());
      expect(res.statusCode).toBe(status);
      expect(res.json.api_version).toBe('1.0');
      if (status >= 400) expect(typeof res.json.errortype).toBe('string');
      expectSecurityHeaders(res.headers);
    });
  }
});

describe('unexpected errors (DESIGN section 7)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({
      extraApiRoutes: (api) => {
        api.get('/__boom', { config: { auth: 'none' } }, async () => {
          throw new Error('database password is hunter2');
        });
      },
    });
  });
  afterAll(async () => t.close());

  it('answer 500 TransactionError naming the request id, and keep the cause out of the response', async () => {
    const res = await t.request({ method: 'GET', url: '/api/v1/__boom' });
    expect(res.statusCode).toBe(500);
    const id = String(res.headers['x-request-id']);
    expect(id).not.toBe('');
    expect(res.json).toEqual({ api_version: '1.0', errortype: 'TransactionError', error: `Internal error (ref ${id})`, data: {} });
    expect(res.body).not.toContain('hunter2');
    expectSecurityHeaders(res.headers);
  });
});

describe('HTTPS served directly (TLS_CERT_FILE and TLS_KEY_FILE)', () => {
  let t: TestApp;
  let dir: string;
  let port: number;
  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'gh-tls-'));
    const cert = makeCertificate({ cn: '127.0.0.1', keyType: 'ec' });
    const tlsCertFile = path.join(dir, 'cert.pem');
    const tlsKeyFile = path.join(dir, 'key.pem');
    writeFileSync(tlsCertFile, cert.pem);
    writeFileSync(tlsKeyFile, cert.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string);
    // api_require_https stays at its default (true): the TLS socket itself satisfies the precondition.
    t = await createTestApp({ requireHttps: true, config: { tlsCertFile, tlsKeyFile } });
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    port = (t.app.server.address() as { port: number }).port;
  });
  afterAll(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  function get(url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: any; headers: Record<string, unknown> }> {
    return new Promise((resolve, reject) => {
      const req = https.get({ host: '127.0.0.1', port, path: url, headers, rejectUnauthorized: false }, (res) => {
        let text = '';
        res.on('data', (d: Buffer) => (text += d.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text), headers: res.headers }));
      });
      req.on('error', reject);
    });
  }

  it('answers over TLS with the default api_require_https, and never 426', async () => {
    const { headers } = await t.keyHeaders();
    const res = await get('/api/v1/auth/session', headers);
    expect(res.status).toBe(200);
    expect(res.body.data.user_id).toEqual(expect.any(Number));
    expectSecurityHeaders(res.headers);
    const missing = await get('/api/v1/nope');
    expect(missing.status).toBe(404);
    expect(missing.body.errortype).toBe('NotFound');
  });
});

describe('CORS', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ settings: { api_allowed_origins: 'https://app.example.com, https://other.example.com' } });
  });
  afterAll(async () => t.close());

  it('answers a preflight for a listed origin without the CSRF header in the allow-list', async () => {
    const res = await t.request({
      method: 'OPTIONS',
      url: '/api/v1/auth/login',
      headers: { origin: 'https://app.example.com', 'access-control-request-method': 'POST' },
    });
    expect(res.statusCode).toBe(204);
    expect(res.headers['access-control-allow-origin']).toBe('https://app.example.com');
    expect(String(res.headers['access-control-allow-methods'])).toContain('POST');
    const allowed = String(res.headers['access-control-allow-headers']).toLowerCase();
    expect(allowed).toContain('public_key');
    expect(allowed).not.toContain('x-service-csrf');
    expectSecurityHeaders(res.headers);
  });

  it('gives nothing to an unlisted origin', async () => {
    const res = await t.request({
      method: 'OPTIONS',
      url: '/api/v1/auth/login',
      headers: { origin: 'https://evil.example.com', 'access-control-request-method': 'POST' },
    });
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
    expect(res.statusCode).toBe(404);
  });

  it('adds the allow-origin header to ordinary responses for a listed origin', async () => {
    const res = await t.request({ method: 'GET', url: '/api/v1/nope', headers: { origin: 'https://other.example.com' } });
    expect(res.headers['access-control-allow-origin']).toBe('https://other.example.com');
  });

  it('is off by default', async () => {
    const t2 = await createTestApp();
    try {
      const res = await t2.request({ method: 'OPTIONS', url: '/api/v1/auth/login', headers: { origin: 'https://app.example.com', 'access-control-request-method': 'POST' } });
      expect(res.headers['access-control-allow-origin']).toBeUndefined();
    } finally {
      await t2.close();
    }
  });
});

describe('client-version handshake', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ settings: { api_min_client_versions: { ios: '2.3.0' } } });
  });
  afterAll(async () => t.close());

  it('gives 426 UpgradeRequired for a lower version', async () => {
    const res = await t.request({ method: 'GET', url: '/api/v1/nope', headers: { client_app: 'ios', client_version: '2.2.9' } });
    expect(res.statusCode).toBe(426);
    expect(res.json.errortype).toBe('UpgradeRequired');
    expectSecurityHeaders(res.headers);
  });

  it('gives 426 UpgradeRequired for a missing version, even on auth/login', async () => {
    const res = await t.request({ method: 'POST', url: '/api/v1/auth/login', headers: { client_app: 'ios' }, payload: { email: 'a@b.co', password: 'x' } });
    expect(res.statusCode).toBe(426);
    expect(res.json.errortype).toBe('UpgradeRequired');
  });

  it('gives 426 UpgradeRequired for a lower version on auth/login, before the login is looked at', async () => {
    const { email, password } = await t.createUser();
    const res = await t.request({ method: 'POST', url: '/api/v1/auth/login', headers: { client_app: 'ios', client_version: '2.2.9' }, payload: { email, password } });
    expect(res.statusCode).toBe(426);
    expect(res.json).toEqual({
      api_version: '1.0',
      errortype: 'UpgradeRequired',
      error: expect.any(String),
      data: { client_app: 'ios', minimum_version: '2.3.0' },
    });
    expect(await t.services.db.selectFrom('apk_api_keys').select('apk_api_key_id').where('apk_type', '=', 'session').execute()).toEqual([]);
  });

  it('gives 426 UpgradeRequired to a valid key on an authenticated endpoint, and to an unreadable version', async () => {
    const { headers } = await t.keyHeaders();
    for (const v of ['1.9.0', 'banana', '']) {
      const res = await t.request({ method: 'GET', url: '/api/v1/auth/session', headers: { ...headers, client_app: 'ios', client_version: v } });
      expect(res.statusCode, v).toBe(426);
      expect(res.json.errortype, v).toBe('UpgradeRequired');
    }
    const ok = await t.request({ method: 'GET', url: '/api/v1/auth/session', headers: { ...headers, client_app: 'ios', client_version: '2.3.0' } });
    expect(ok.statusCode).toBe(200);
  });

  it('lets an equal or higher version through', async () => {
    for (const v of ['2.3.0', '2.10.1', '3.0.0']) {
      const res = await t.request({ method: 'GET', url: '/api/v1/nope', headers: { client_app: 'ios', client_version: v } });
      expect(res.statusCode, v).toBe(404);
    }
  });

  it('leaves requests without client headers and apps without a minimum alone', async () => {
    expect((await t.request({ method: 'GET', url: '/api/v1/nope' })).statusCode).toBe(404);
    expect((await t.request({ method: 'GET', url: '/api/v1/nope', headers: { client_app: 'android' } })).statusCode).toBe(404);
  });
});

describe('general rate limit', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ settings: { api_rate_limit_requests: 3, api_rate_limit_window: 60 } });
  });
  afterAll(async () => t.close());

  it('answers 429 with Retry-After and the exact data keys, then recovers after the window', async () => {
    const ip = '192.0.2.10';
    for (let i = 0; i < 3; i++) {
      expect((await t.request({ method: 'GET', url: '/api/v1/nope', remoteAddress: ip })).statusCode).toBe(404);
      t.clock.advanceSeconds(10);
    }
    // Hits at 0, 10 and 20 s; now 30 s: the oldest leaves the window at 60 s, 30 s from now.
    const res = await t.request({ method: 'GET', url: '/api/v1/nope', remoteAddress: ip });
    expect(res.statusCode).toBe(429);
    expect(res.headers['retry-after']).toBe('30');
    expect(res.json).toEqual({
      api_version: '1.0',
      errortype: 'RateLimitError',
      error: expect.any(String),
      data: { limit: 3, window_seconds: 60, count: 3, retry_after_seconds: 30 },
    });
    expectSecurityHeaders(res.headers);
    // Other addresses are unaffected.
    expect((await t.request({ method: 'GET', url: '/api/v1/nope', remoteAddress: '192.0.2.11' })).statusCode).toBe(404);
    t.clock.advanceSeconds(30);
    expect((await t.request({ method: 'GET', url: '/api/v1/nope', remoteAddress: ip })).statusCode).toBe(404);
  });
});

describe('general rate limit: the client address', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ settings: { api_rate_limit_requests: 2, api_rate_limit_window: 60 }, config: { trustProxy: ['10.0.0.1'] } });
  });
  afterAll(async () => t.close());

  const hit = (remoteAddress: string, forwardedFor?: string) =>
    t.request({ method: 'GET', url: '/api/v1/nope', remoteAddress, headers: forwardedFor ? { 'x-forwarded-for': forwardedFor } : {} });

  it('meters by X-Forwarded-For from a trusted proxy, one bucket per forwarded client', async () => {
    expect((await hit('10.0.0.1', '192.0.2.40')).statusCode).toBe(404);
    expect((await hit('10.0.0.1', '192.0.2.40')).statusCode).toBe(404);
    expect((await hit('10.0.0.1', '192.0.2.40')).statusCode).toBe(429);
    // Another client behind the same proxy has its own window.
    expect((await hit('10.0.0.1', '192.0.2.41')).statusCode).toBe(404);
  });

  it('ignores X-Forwarded-For from an untrusted address: a forger cannot spread its requests over invented clients', async () => {
    expect((await hit('192.0.2.50', '203.0.113.1')).statusCode).toBe(404);
    expect((await hit('192.0.2.50', '203.0.113.2')).statusCode).toBe(404);
    const res = await hit('192.0.2.50', '203.0.113.3');
    expect(res.statusCode).toBe(429);
    expect(res.json.data).toEqual({ limit: 2, window_seconds: 60, count: 2, retry_after_seconds: 60 });
  });
});

describe("requests Node's HTTP parser refuses (a real socket: inject never reaches the parser)", () => {
  let t: TestApp;
  let port: number;
  beforeAll(async () => {
    t = await createTestApp();
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    port = (t.app.server.address() as { port: number }).port;
  });
  afterAll(async () => t.close());

  /** Sends raw bytes and reads the whole answer until the server closes the connection. */
  function raw(bytes: string): Promise<{ status: number; headers: Record<string, string>; body: string }> {
    return new Promise((resolve, reject) => {
      const socket = net.connect(port, '127.0.0.1');
      const chunks: Buffer[] = [];
      socket.on('data', (d: Buffer) => chunks.push(d));
      // The server closes while the client may still be sending: a reset after the answer is expected.
      socket.on('error', () => {});
      socket.on('close', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const split = text.indexOf('\r\n\r\n');
        if (split < 0) return reject(new Error(`no HTTP answer: ${JSON.stringify(text.slice(0, 200))}`));
        const [statusLine, ...lines] = text.slice(0, split).split('\r\n');
        const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
        resolve({ status: Number(statusLine!.split(' ')[1]), headers, body: text.slice(split + 4) });
      });
      socket.write(bytes);
    });
  }

  const LONG = 'a'.repeat(70 * 1024);

  it('answers a 70 KB URL under /api/v1/ with 431 TransactionError in the envelope, with the security headers', async () => {
    const res = await raw(`GET /api/v1/auth/session?q=${LONG} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
    expect(res.status).toBe(431);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(Number(res.headers['content-length'])).toBe(Buffer.byteLength(res.body));
    expect(JSON.parse(res.body)).toEqual({ api_version: '1.0', errortype: 'TransactionError', error: 'Request URL or headers are too large', data: {} });
    expectSecurityHeaders(res.headers);
  });

  it('answers 70 KB of headers under /api/v1/ with the same 431 envelope', async () => {
    const res = await raw(`GET /api/v1/auth/session HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Padding: ${LONG}\r\n\r\n`);
    expect(res.status).toBe(431);
    expect(JSON.parse(res.body)).toMatchObject({ api_version: '1.0', errortype: 'TransactionError' });
  });

  it('answers a malformed request line under /api/v1/ with 400 TransactionError in the envelope', async () => {
    const res = await raw('GET /api/v1/auth/session HTTX/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    expect(res.status).toBe(400);
    expect(JSON.parse(res.body)).toEqual({ api_version: '1.0', errortype: 'TransactionError', error: 'Malformed request', data: {} });
    expectSecurityHeaders(res.headers);
  });

  it('answers a website path in plain text, and keeps serving afterwards', async () => {
    const res = await raw(`GET /login?q=${LONG} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
    expect(res.status).toBe(431);
    expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(res.body).toBe('Request URL or headers are too large\n');
    const ok = await raw('GET /api/v1/actions HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n');
    expect(ok.status).toBe(200);
  });
});
