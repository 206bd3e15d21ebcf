import pino from 'pino';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/boot/app.js';
import { loggerOptions } from '../../src/boot/server.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

// At `npm start`'s log level (info) a request is one console line, written as its answer leaves: the
// request (method, route pattern, client address), its status and the time it took. The contract's
// request log is the database record, written for every API request whatever the console's level.

function sink(lines: Array<Record<string, unknown>>): Writable {
  return new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const line of chunk.toString('utf8').split('\n')) if (line) lines.push(JSON.parse(line));
      cb();
    },
  });
}

describe('console lines of a request', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => t.close());

  async function appAt(level: string, lines: Array<Record<string, unknown>>) {
    const app = await buildApp(t.services, { logger: pino(loggerOptions(level), sink(lines)) });
    await app.ready();
    return app;
  }

  it('at info: one line per request, "request completed", naming the route, the status and the time', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const app = await appAt('info', lines);
    try {
      const { headers } = await t.keyHeaders();
      expect((await app.inject({ method: 'GET', url: '/api/v1/auth/session', headers })).statusCode).toBe(200);
      expect((await app.inject({ method: 'GET', url: '/api/v1/nope' })).statusCode).toBe(404);
      expect((await app.inject({ method: 'GET', url: '/api/v1/auth/session', headers: { ...headers, secret_key: 'wrong' } })).statusCode).toBe(401);
    } finally {
      await app.close();
    }
    const requestLines = lines.filter((l) => l.reqId !== undefined);
    expect(requestLines.map((l) => l.msg)).toEqual(['request completed', 'request completed', 'request completed']);
    const completed = requestLines.filter((l) => l.msg === 'request completed');
    expect(completed.map((l) => l.req)).toEqual([
      { method: 'GET', route: '/api/v1/auth/session', remoteAddress: '127.0.0.1' },
      { method: 'GET', route: null, remoteAddress: '127.0.0.1' },
      { method: 'GET', route: '/api/v1/auth/session', remoteAddress: '127.0.0.1' },
    ]);
    expect(completed.map((l) => (l.res as { statusCode: number }).statusCode)).toEqual([200, 404, 401]);
    for (const l of completed) {
      expect(l.level).toBe(30);
      expect(typeof l.responseTime).toBe('number');
    }
    expect(lines.some((l) => l.msg === 'incoming request')).toBe(false);
  });

  it('at debug: the incoming line too, before the completed one', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const app = await appAt('debug', lines);
    try {
      expect((await app.inject({ method: 'GET', url: '/api/v1/nope' })).statusCode).toBe(404);
    } finally {
      await app.close();
    }
    const requestLines = lines.filter((l) => l.reqId !== undefined);
    expect(requestLines.map((l) => [l.msg, l.level])).toEqual([
      ['incoming request', 20],
      ['request completed', 30],
    ]);
    expect(requestLines[0]!.req).toEqual({ method: 'GET', route: null, remoteAddress: '127.0.0.1' });
  });

  it('at warn: none', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const app = await appAt('warn', lines);
    try {
      expect((await app.inject({ method: 'GET', url: '/api/v1/nope' })).statusCode).toBe(404);
    } finally {
      await app.close();
    }
    expect(lines.filter((l) => l.reqId !== undefined)).toEqual([]);
  });

  it('the request log records every API request whatever the console level', async () => {
    await t.services.requestLog.flush();
    const before = await t.services.db.selectFrom('rql_request_logs').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    const app = await appAt('warn', []);
    try {
      for (let i = 0; i < 3; i++) expect((await app.inject({ method: 'GET', url: '/api/v1/nope' })).statusCode).toBe(404);
    } finally {
      await app.close();
    }
    await t.services.requestLog.flush();
    const after = await t.services.db.selectFrom('rql_request_logs').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    expect(Number(after.n) - Number(before.n)).toBe(3);
  });
});
