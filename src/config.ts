import path from 'node:path';

/** Process environment, read once at start. Everything else is a setting in the database. */
export interface Config {
  port: number;
  host: string;
  dataDir: string;
  databaseUrl: string | undefined;
  pgPoolMax: number;
  redisUrl: string | undefined;
  baseUrl: string;
  tlsCertFile: string | undefined;
  tlsKeyFile: string | undefined;
  /** Addresses or CIDRs whose X-Forwarded-* headers are believed. */
  trustProxy: string[];
  logLevel: string;
  /** Where Drive blob bytes live: BLOB_STORE (fs, the default, or s3) and the S3_* variables. */
  blobStore: BlobStoreConfig;
}

export type BlobStoreConfig =
  | { driver: 'fs' }
  | {
      driver: 's3';
      endpoint: string | undefined;
      bucket: string;
      region: string;
      accessKeyId: string | undefined;
      secretAccessKey: string | undefined;
      forcePathStyle: boolean;
    };

export class ConfigError extends Error {}

function intFrom(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) throw new ConfigError(`${name} must be a non-negative integer, got '${raw}'`);
  return n;
}

function optional(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const raw = env[name];
  return raw === undefined || raw.trim() === '' ? undefined : raw.trim();
}

function blobStoreFrom(env: NodeJS.ProcessEnv): BlobStoreConfig {
  const driver = optional(env, 'BLOB_STORE') ?? 'fs';
  if (driver === 'fs') return { driver };
  if (driver !== 's3') throw new ConfigError(`BLOB_STORE must be 'fs' or 's3', got '${driver}'`);
  const bucket = optional(env, 'S3_BUCKET');
  if (!bucket) throw new ConfigError('BLOB_STORE=s3 needs S3_BUCKET');
  const accessKeyId = optional(env, 'S3_ACCESS_KEY_ID');
  const secretAccessKey = optional(env, 'S3_SECRET_ACCESS_KEY');
  if ((accessKeyId === undefined) !== (secretAccessKey === undefined)) {
    throw new ConfigError('S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY must be set together');
  }
  const pathStyle = (optional(env, 'S3_FORCE_PATH_STYLE') ?? 'false').toLowerCase();
  if (!['true', 'false', '1', '0'].includes(pathStyle)) throw new ConfigError(`S3_FORCE_PATH_STYLE must be true or false, got '${pathStyle}'`);
  return {
    driver,
    endpoint: optional(env, 'S3_ENDPOINT'),
    bucket,
    region: optional(env, 'S3_REGION') ?? 'us-east-1',
    accessKeyId,
    secretAccessKey,
    forcePathStyle: pathStyle === 'true' || pathStyle === '1',
  };
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const port = intFrom(env, 'PORT', 8080);
  const host = optional(env, 'HOST') ?? '127.0.0.1';
  const tlsCertFile = optional(env, 'TLS_CERT_FILE');
  const tlsKeyFile = optional(env, 'TLS_KEY_FILE');
  if ((tlsCertFile === undefined) !== (tlsKeyFile === undefined)) {
    throw new ConfigError('TLS_CERT_FILE and TLS_KEY_FILE must be set together');
  }
  const scheme = tlsCertFile ? 'https' : 'http';
  const baseUrl = (optional(env, 'BASE_URL') ?? `${scheme}://${host}:${port}`).replace(/\/+$/, '');
  return {
    port,
    host,
    dataDir: path.resolve(optional(env, 'DATA_DIR') ?? './data'),
    databaseUrl: optional(env, 'DATABASE_URL'),
    pgPoolMax: intFrom(env, 'PG_POOL_MAX', 10),
    redisUrl: optional(env, 'REDIS_URL'),
    baseUrl,
    tlsCertFile,
    tlsKeyFile,
    trustProxy: (optional(env, 'TRUST_PROXY') ?? '').split(',').map((s) => s.trim()).filter(Boolean),
    logLevel: optional(env, 'LOG_LEVEL') ?? 'info',
    blobStore: blobStoreFrom(env),
  };
}
