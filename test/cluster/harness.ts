import { readFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import S3rver from 's3rver';
import { createUser } from '../../src/accounts/users.js';
import { createMachineKey } from '../../src/accounts/api-keys.js';
import { loadConfig } from '../../src/config.js';
import { openDatabase, type Database } from '../../src/db/database.js';
import { MemoryRateLimitStore } from '../../src/http/rate-limit/memory-store.js';
import { randomHex } from '../../src/lib/crypto.js';
import { systemClock } from '../../src/lib/clock.js';
import { createServices } from '../../src/boot/compose.js';
import type { Services } from '../../src/services.js';
import { freePort, programEnv, startServerProcess, tempDataDir, type ServerProcess } from '../helpers/processes.js';

// A cluster of real server processes (`node dist/main.js`) on one PostgreSQL database, one Redis database
// and one S3-compatible store (s3rver, in this process), plus a control connection the tests use to set
// things up and to check invariants by SQL, as an operator's CLI would.

const PG_BASE = process.env.CLUSTER_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const REDIS_BASE = process.env.CLUSTER_REDIS_URL ?? 'redis://127.0.0.1:6379';
export const S3_BUCKET = 'gatehouse';

export interface InitialAdmin {
  user_id: number;
  email: string;
  password: string;
  public_key: string;
  secret_key: string;
}

export interface Reply {
  status: number;
  text: string;
  json: any;
  headers: Headers;
}

export interface Node {
  name: string;
  dataDir: string;
  port: number;
  process: ServerProcess;
}

export interface Cluster {
  embedded: boolean;
  databaseUrl: string;
  redisUrl: string;
  s3Endpoint: string;
  s3Dir: string;
  nodes: Node[];
  admin: InitialAdmin;
  /** Services over the cluster's database in the test process (no HTTP, no scheduler): setup and checks. */
  control: Services;
  controlDb: Database;
  /** Starts (or restarts) node i on its own DATA_DIR and port. */
  start(i: number): Promise<Node>;
  close(): Promise<void>;
}

/** A fresh database, a Redis database number of its own, s3rver on a free port; node 0 starts first (migrates, writes initial-admin.json). */
export async function startCluster(nodeCount: number, opts: { embedded?: boolean } = {}): Promise<Cluster> {
  const embedded = opts.embedded === true;
  const name = `gh_cluster_${randomHex(6)}`;
  const admin = new pg.Client({ connectionString: PG_BASE });
  await admin.connect();
  if (!embedded) await admin.query(`create database ${name}`);
  const dbUrl = new URL(PG_BASE);
  dbUrl.pathname = `/${name}`;
  // Rate-limit keys carry no run-specific prefix in production; a database number of its own (1..15)
  // keeps concurrent runs apart, and it is flushed at the end.
  const redisUrl = `${REDIS_BASE}/${1 + Math.floor(Math.random() * 15)}`;
  const s3Data = tempDataDir('gh-cluster-s3-');
  const s3 = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory: s3Data.dir, configureBuckets: [{ name: S3_BUCKET, configs: [] }] });
  const { port: s3Port } = await s3.run();
  const s3Endpoint = `http://127.0.0.1:${s3Port}`;
  const dirs = Array.from({ length: nodeCount }, (_, i) => tempDataDir(`gh-cluster-node${i}-`));
  const ports = await Promise.all(dirs.map(() => freePort()));
  const nodes: Node[] = [];

  // Embedded: one server on PGlite in its DATA_DIR with the fs blob store; the control connection goes
  // through the server's Unix socket, as psql and the CLI do.
  const databaseUrl = embedded ? `postgres://postgres@localhost/postgres?host=${encodeURIComponent(dirs[0]!.dir)}` : dbUrl.toString();
  const shared = embedded
    ? { TRUST_PROXY: '127.0.0.1' }
    : {
        DATABASE_URL: databaseUrl,
        PG_POOL_MAX: '6',
        REDIS_URL: redisUrl,
        TRUST_PROXY: '127.0.0.1',
        BLOB_STORE: 's3',
        S3_ENDPOINT: s3Endpoint,
        S3_BUCKET,
        S3_REGION: 'us-east-1',
        S3_ACCESS_KEY_ID: 'S3RVER',
        S3_SECRET_ACCESS_KEY: 'S3RVER',
        S3_FORCE_PATH_STYLE: 'true',
      };
  const envFor = (i: number) => programEnv({ DATA_DIR: dirs[i]!.dir, PORT: String(ports[i]), ...shared });

  const start = async (i: number): Promise<Node> => {
    const proc = await startServerProcess(envFor(i), { timeoutMs: embedded ? 150_000 : 60_000 });
    const node = { name: String.fromCharCode(65 + i), dataDir: dirs[i]!.dir, port: ports[i]!, process: proc };
    nodes[i] = node;
    return node;
  };

  await start(0);
  for (let i = 1; i < nodeCount; i++) await start(i);
  const initialAdmin = JSON.parse(readFileSync(path.join(dirs[0]!.dir, 'initial-admin.json'), 'utf8')) as InitialAdmin;

  const controlDb = await openDatabase({ databaseUrl, pgPoolMax: embedded ? 1 : 4 });
  const config = loadConfig({ DATABASE_URL: databaseUrl, DATA_DIR: s3Data.dir });
  const control = await createServices({ config, database: controlDb, rateLimitStore: new MemoryRateLimitStore(), readCaches: false });

  return {
    embedded,
    databaseUrl,
    redisUrl,
    s3Endpoint,
    s3Dir: s3Data.dir,
    nodes,
    admin: initialAdmin,
    control,
    controlDb,
    start,
    async close() {
      await control.close().catch(() => {});
      await controlDb.close().catch(() => {});
      await Promise.all(nodes.map((n) => n?.process.stop('SIGKILL')));
      await s3.close().catch(() => {});
      const { Redis } = await import('ioredis');
      const redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
      await redis.connect().then(() => redis.flushdb()).catch(() => {});
      redis.disconnect();
      if (!embedded) await admin.query(`drop database if exists ${name} with (force)`);
      await admin.end();
      s3Data.remove();
      for (const d of dirs) d.remove();
    },
  };
}

/** One HTTP request to a node; `ip` is sent as X-Forwarded-For (the nodes trust 127.0.0.1 as a proxy). */
export async function call(
  node: Node,
  method: string,
  url: string,
  o: { headers?: Record<string, string>; body?: unknown; raw?: Buffer | string; ip?: string; signal?: AbortSignal } = {},
): Promise<Reply> {
  const headers: Record<string, string> = { ...o.headers };
  if (o.ip) headers['x-forwarded-for'] = o.ip;
  let body: string | Buffer | undefined;
  if (o.raw !== undefined) body = o.raw;
  else if (o.body !== undefined) {
    body = JSON.stringify(o.body);
    headers['content-type'] ??= 'application/json';
  }
  const res = await fetch(`http://127.0.0.1:${node.port}${url}`, { method, headers, body, signal: o.signal, redirect: 'manual' });
  const text = await res.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, text, json, headers: res.headers };
}

/** A user with a machine key (permission 4), made through the control connection. */
export async function memberWithKey(c: Cluster, permission = 0): Promise<{ userId: number; email: string; keyId: number; headers: Record<string, string> }> {
  const now = systemClock.now();
  const email = `m-${randomHex(5)}@example.com`;
  const userId = await createUser(c.control.db, {
    email,
    password: `pw-${randomHex(8)}`,
    permission,
    firstName: 'Cluster',
    lastName: 'Member',
    now,
  });
  const key = await createMachineKey(c.control.db, { userId, permission: 4, ipRestriction: null, startTime: null, expiresTime: null, active: true, now });
  return { userId, email, keyId: key.apiKeyId, headers: { public_key: key.publicKey, secret_key: key.secretKey } };
}

/** Writes settings through the control connection and waits until every node has reloaded them (1 s). */
export async function setSettings(c: Cluster, values: Record<string, unknown>): Promise<void> {
  for (const [name, value] of Object.entries(values)) await c.control.settings.set(name, value);
  await new Promise((r) => setTimeout(r, 1300));
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
