import type { FastifyInstance, InjectOptions } from 'fastify';
import pino from 'pino';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/boot/app.js';
import { randomHex } from '../../src/lib/crypto.js';
import { loggerOptions } from '../../src/boot/server.js';
import { PLAN, action, content, createDriveApp, member, sha256, type DriveApp } from './drive-upload-fixture.js';

// SPEC "Request log record": secret keys are never logged. A token in a URL is a secret key: a device-link
// poll token (it yields a session key on the first poll after approval), an upload token, a share-link
// token, a web-session bridge token. Every log line names the route pattern, never the URL.

function sink(lines: string[]): Writable {
  return new Writable({
    write(chunk: Buffer, _enc, cb) {
      lines.push(chunk.toString('utf8'));
      cb();
    },
  });
}

describe('log lines carry the route pattern, never a token from the URL', () => {
  let t: DriveApp;
  beforeAll(async () => {
    t = await createDriveApp();
  });
  afterAll(async () => t.close());

  /** Requests carrying every kind of token in their path and query, through `app`; the tokens sent. */
  async function tokenTraffic(app: FastifyInstance): Promise<string[]> {
    const inject = (o: InjectOptions) => app.inject(o);
    const tokens: string[] = [];

    // Device link: the poll token is the path.
    const link = await inject({ method: 'POST', url: '/api/v1/auth/device_link', payload: { device_name: 'Laptop', platform: 'linux' } });
    expect(link.statusCode).toBe(200);
    const pollToken: string = link.json().data.poll_token;
    tokens.push(pollToken);
    expect((await inject({ method: 'GET', url: `/api/v1/auth/device_link/${pollToken}` })).json().data.status).toBe('pending');
    expect((await inject({ method: 'GET', url: `/api/v1/auth/device_link/${pollToken}?poll_token=${pollToken}` })).statusCode).toBe(200);

    // Web-session bridge: the token is the path of the page.
    const u = await t.createUser();
    const session = await t.login(u.email, u.password);
    tokens.push(session.headers.secret_key!);
    const bridge = await inject({ method: 'POST', url: '/api/v1/auth/web_session', headers: session.headers, payload: {} });
    expect(bridge.statusCode).toBe(200);
    const bridgeUrl: string = bridge.json().data.bridge_url;
    tokens.push(bridgeUrl.slice(bridgeUrl.lastIndexOf('/') + 1));
    expect((await inject({ method: 'GET', url: bridgeUrl })).statusCode).toBe(302);

    // Upload: the token is the path of every chunk PUT and GET.
    const m = await member(t, PLAN);
    const bytes = content(1000, randomHex(4));
    const opened = await inject({ method: 'POST', url: '/api/v1/action/drive_upload_init', headers: m.headers, payload: { name: 'a.bin', size_bytes: bytes.length, sha256: sha256(bytes) } });
    expect(opened.statusCode).toBe(200);
    const uploadToken: string = opened.json().data.upload_token;
    tokens.push(uploadToken);
    const put = await inject({
      method: 'PUT',
      url: `/api/v1/drive_upload/${uploadToken}`,
      headers: { ...m.headers, 'content-type': 'application/octet-stream', 'content-range': `bytes 0-${bytes.length - 1}/${bytes.length}` },
      payload: bytes,
    });
    expect(put.statusCode).toBe(200);
    expect((await inject({ method: 'GET', url: `/api/v1/drive_upload/${uploadToken}`, headers: m.headers })).statusCode).toBe(200);
    const done = await action(t, m.headers, 'drive_upload_complete', { upload_token: uploadToken });
    expect(done.statusCode).toBe(200);

    // Share link: the token is the public path.
    const shared = await inject({ method: 'POST', url: '/api/v1/action/drive_link_create', headers: m.headers, payload: { file_id: done.json.data.file.file_id } });
    expect(shared.statusCode, shared.body).toBe(200);
    const sharePath: string = shared.json().data.url;
    tokens.push(sharePath.slice(sharePath.lastIndexOf('/') + 1));
    expect((await inject({ method: 'GET', url: sharePath })).statusCode).toBe(200);
    expect((await inject({ method: 'GET', url: `${sharePath}?download=1` })).statusCode).toBeLessThan(500);

    // Unmatched paths (404s) and unknown tokens on matched routes, on the API and the website.
    const canary = `canary${randomHex(16)}`;
    tokens.push(canary);
    expect((await inject({ method: 'GET', url: `/api/v1/no/such/${canary}?token=${canary}` })).statusCode).toBe(404);
    expect((await inject({ method: 'GET', url: `/no/such/page/${canary}?token=${canary}` })).statusCode).toBe(404);
    expect((await inject({ method: 'GET', url: `/api/v1/auth/device_link/${canary}` })).statusCode).toBe(404);
    expect((await inject({ method: 'GET', url: `/s/${canary}x` })).statusCode).toBe(404);
    // A rejected chunk (bad token) and a wrong method: error lines.
    expect((await inject({ method: 'PUT', url: `/api/v1/drive_upload/${canary}`, headers: { ...m.headers, 'content-type': 'application/octet-stream', 'content-range': 'bytes 0-0/1' }, payload: 'x' })).statusCode).toBeGreaterThanOrEqual(400);
    return tokens;
  }

  function expectNoTokens(lines: string[], tokens: string[]): void {
    const logged = lines.join("");
    // The lines are there, and they name routes: the scan below is over a real log.
    expect(lines.filter((l) => l.includes('incoming request')).length).toBeGreaterThanOrEqual(15);
    for (const route of ['/api/v1/auth/device_link/:pollToken', '/api/v1/drive_upload/:token', '/s/:token', '/auth/bridge/:token']) expect(logged).toContain(`"route":"${route}"`);
    expect(logged).toContain('"route":null'); // a 404 names no path
    for (const token of tokens) expect(logged, token).not.toContain(token);
    expect(logged).not.toMatch(/"url":/);
  }

  it('through a logger given as options (the level trace: every line Fastify writes)', async () => {
    const lines: string[] = [];
    const app = await buildApp(t.services, { logger: { level: 'trace', stream: sink(lines) } });
    await app.ready();
    try {
      expectNoTokens(lines, await tokenTraffic(app));
    } finally {
      await app.close();
    }
  });

  it("through the server's own logger instance", async () => {
    const lines: string[] = [];
    const app = await buildApp(t.services, { logger: pino(loggerOptions('trace'), sink(lines)) });
    await app.ready();
    try {
      expectNoTokens(lines, await tokenTraffic(app));
    } finally {
      await app.close();
    }
  });

  it('even over a logger whose own serializers would print the URL', async () => {
    const lines: string[] = [];
    const leaky = { req: (r: { url: string }) => ({ url: r.url }) };
    const app = await buildApp(t.services, { logger: pino({ level: 'trace', serializers: leaky }, sink(lines)) });
    await app.ready();
    try {
      expectNoTokens(lines, await tokenTraffic(app));
    } finally {
      await app.close();
    }
  });
});
