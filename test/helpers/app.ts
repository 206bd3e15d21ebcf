import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { createMachineKey, type IssuedKey } from '../../src/accounts/api-keys.js';
import { createUser } from '../../src/accounts/users.js';
import { loadConfig, type Config } from '../../src/config.js';
import type { Database } from '../../src/db/database.js';
import { buildApp, type AppOptions } from '../../src/boot/app.js';
import { MemoryRateLimitStore } from '../../src/http/rate-limit/memory-store.js';
import { RedisRateLimitStore } from '../../src/http/rate-limit/redis-store.js';
import { RedisVaultWindowStore } from '../../src/accounts/vault/window-store.js';
import { TestClock } from '../../src/lib/clock.js';
import { randomHex } from '../../src/lib/crypto.js';
import { createServices } from '../../src/boot/compose.js';
import type { Services } from '../../src/services.js';
import { openTestDatabase } from './database.js';

export interface TestApp {
  app: FastifyInstance;
  services: Services;
  database: Database;
  clock: TestClock;
  close(): Promise<void>;
  /** app.inject with JSON parsed; `json` is the body as an object. */
  request(opts: InjectOptions): Promise<LightMyRequestResponse & { json: any }>;
  createUser(opts?: { email?: string; password?: string; permission?: number; firstName?: string; lastName?: string }): Promise<{ userId: number; email: string; password: string }>;
  createMachineKey(opts: { userId: number; permission?: number; ipRestriction?: string; startTime?: Date; expiresTime?: Date; active?: boolean }): Promise<IssuedKey>;
  /** A user of the given permission with a machine key of the given capability, as request headers. */
  keyHeaders(opts?: { permission?: number; userPermission?: number }): Promise<{ headers: Record<string, string>; userId: number; key: IssuedKey }>;
  /** A staff user (usr_permission 5 unless given) with a full-capability machine key. */
  staffHeaders(opts?: { userPermission?: number }): Promise<{ headers: Record<string, string>; userId: number; key: IssuedKey }>;
  login(email: string, password: string): Promise<{ headers: Record<string, string>; body: any }>;
}

export interface TestAppOptions {
  config?: Partial<Config>;
  /** Keep api_require_https at its default (true); most tests talk plain HTTP through inject. */
  requireHttps?: boolean;
  settings?: Record<string, unknown>;
  start?: Date | string;
  extraApiRoutes?: AppOptions['extraApiRoutes'];
  /** Where plugin folders are discovered (default: the project's plugins/). */
  pluginsDir?: string;
  /** Plugins to activate before the app starts. */
  activePlugins?: string[];
}

export async function createTestApp(opts: TestAppOptions = {}): Promise<TestApp> {
  const database = await openTestDatabase();
  const clock = new TestClock(opts.start ?? '2026-03-01T12:00:00Z');
  // A data folder of its own unless the test names one (the default, ./data, is the checkout's).
  const ownDataDir = opts.config?.dataDir === undefined;
  const dataDir = opts.config?.dataDir ?? mkdtempSync(path.join(os.tmpdir(), 'gatehouse-test-data-'));
  const config: Config = { ...loadConfig({}), ...opts.config, dataDir, databaseUrl: process.env.DATABASE_URL };
  const rateLimitStore = process.env.REDIS_URL
    ? new RedisRateLimitStore(process.env.REDIS_URL, `gatehouse:test:${randomHex(6)}:`)
    : new MemoryRateLimitStore();
  const vaultWindowStore = process.env.REDIS_URL ? new RedisVaultWindowStore(process.env.REDIS_URL, clock, `gatehouse:test:${randomHex(6)}:vault-window:`) : undefined;
  const services = await createServices({ config, database, clock, rateLimitStore, ...(vaultWindowStore ? { vaultWindowStore } : {}), ...(opts.pluginsDir ? { pluginsDir: opts.pluginsDir } : {}) });
  for (const name of opts.activePlugins ?? []) await services.plugins.setActive(name, true);
  if (!opts.requireHttps) await services.settings.set('api_require_https', false);
  for (const [name, value] of Object.entries(opts.settings ?? {})) await services.settings.set(name, value);
  const app = await buildApp(services, { extraApiRoutes: opts.extraApiRoutes });
  await app.ready();
  let seq = 0;

  const t: TestApp = {
    app,
    services,
    database,
    clock,
    async close() {
      await app.close();
      await services.close();
      await database.close();
      if (ownDataDir) rmSync(dataDir, { recursive: true, force: true });
    },
    async request(o) {
      const res = await app.inject(o);
      let json: any = undefined;
      try {
        json = res.json();
      } catch {
        json = undefined;
      }
      return Object.assign(res, { json });
    },
    async createUser(u = {}) {
      const email = u.email ?? `user${++seq}-${randomHex(3)}@example.com`;
      const password = u.password ?? `pw-${randomHex(8)}`;
      const userId = await createUser(services.db, {
        email,
        password,
        permission: u.permission ?? 0,
        firstName: u.firstName ?? 'Test',
        lastName: u.lastName ?? `User${seq}`,
        now: clock.now(),
      });
      return { userId, email, password };
    },
    async createMachineKey(k) {
      return createMachineKey(services.db, {
        userId: k.userId,
        permission: k.permission ?? 4,
        ipRestriction: k.ipRestriction ?? null,
        startTime: k.startTime ?? null,
        expiresTime: k.expiresTime ?? null,
        active: k.active ?? true,
        now: clock.now(),
      });
    },
    async keyHeaders(k = {}) {
      const { userId } = await t.createUser({ permission: k.userPermission ?? 0 });
      const key = await t.createMachineKey({ userId, permission: k.permission ?? 4 });
      return { headers: { public_key: key.publicKey, secret_key: key.secretKey }, userId, key };
    },
    async staffHeaders(s = {}) {
      return t.keyHeaders({ permission: 4, userPermission: s.userPermission ?? 5 });
    },
    async login(email, password) {
      const res = await t.request({ method: 'POST', url: '/api/v1/auth/login', payload: { email, password } });
      if (res.statusCode !== 200) throw new Error(`login failed: ${res.statusCode} ${res.body}`);
      return { headers: { public_key: res.json.data.public_key, secret_key: res.json.data.secret_key }, body: res.json };
    },
  };
  return t;
}
