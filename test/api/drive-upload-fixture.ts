import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { FeatureValue } from '../../src/db/types.js';
import { createTestApp, type TestApp, type TestAppOptions } from '../helpers/app.js';
import { createTier } from '../helpers/tiers.js';

// Shared by the Drive upload, blob and serving tests: an app with Drive on and a DATA_DIR of its own,
// members on tiers, and the chunk protocol as a client speaks it.

export const CHUNK = 64 * 1024;

export type DriveApp = TestApp & { dataDir: string };

export async function createDriveApp(opts: TestAppOptions = {}): Promise<DriveApp> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'gh-drive-'));
  const t = await createTestApp({
    ...opts,
    config: { dataDir, ...opts.config },
    settings: { drive_active: true, drive_upload_chunk_bytes: CHUNK, ...opts.settings },
  });
  const close = t.close;
  return Object.assign(t, {
    dataDir,
    async close() {
      await close();
      await rm(dataDir, { recursive: true, force: true });
    },
  });
}

let tierSeq = 0;

/** A member on a new tier with these Drive features (none: tierless), with a machine key. */
export async function member(t: TestApp, features: Record<string, FeatureValue> | null) {
  const k = await t.keyHeaders();
  if (features) {
    const tier = await createTier(t, { name: `drive${++tierSeq}`, level: 10 + tierSeq, features });
    await t.services.tiers.membership.assignManually(k.userId, tier.tierId, null);
  }
  return { headers: k.headers, userId: k.userId };
}

export const PLAN = { drive_storage_bytes: 10_000_000, drive_max_file_bytes: 5_000_000, drive_share_links: true, drive_versioning_depth: 3 };

/** Deterministic bytes (seeded), so tests can make the same or different content at will. */
export function content(size: number, seed = 'a'): Buffer {
  const out = Buffer.alloc(size);
  let block = createHash('sha256').update(seed).digest();
  for (let i = 0; i < size; i += 32) {
    block.copy(out, i, 0, Math.min(32, size - i));
    block = createHash('sha256').update(block).digest();
  }
  return out;
}

export const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

export function action(t: TestApp, headers: Record<string, string>, name: string, payload: Record<string, unknown>, extra: Record<string, string> = {}) {
  return t.request({ method: 'POST', url: `/api/v1/action/${name}`, headers: { ...headers, ...extra }, payload });
}

export function putChunk(t: TestApp, headers: Record<string, string>, token: string, bytes: Buffer, start: number, total: number) {
  return t.request({
    method: 'PUT',
    url: `/api/v1/drive_upload/${token}`,
    headers: { ...headers, 'content-type': 'application/octet-stream', 'content-range': `bytes ${start}-${start + bytes.length - 1}/${total}` },
    payload: bytes,
  });
}

/** Sends every chunk of `bytes` to an opened upload, in order. */
export async function sendAll(t: TestApp, headers: Record<string, string>, token: string, bytes: Buffer, chunk = CHUNK): Promise<void> {
  for (let start = 0; start < bytes.length; start += chunk) {
    const res = await putChunk(t, headers, token, bytes.subarray(start, start + chunk), start, bytes.length);
    if (res.statusCode !== 200) throw new Error(`chunk at ${start}: ${res.statusCode} ${res.body}`);
  }
}

/** init, every chunk, complete: the completion's answer. */
export async function upload(t: TestApp, headers: Record<string, string>, bytes: Buffer, init: Record<string, unknown> = {}) {
  const opened = await action(t, headers, 'drive_upload_init', { name: 'file.bin', size_bytes: bytes.length, ...init });
  if (opened.statusCode !== 200) throw new Error(`init: ${opened.statusCode} ${opened.body}`);
  if (opened.json.data.deduped) return opened;
  await sendAll(t, headers, opened.json.data.upload_token, bytes);
  return action(t, headers, 'drive_upload_complete', { upload_token: opened.json.data.upload_token });
}

/** A member who can also sign in on the website (known email and password), on a tier with these features. */
export async function memberWithLogin(t: TestApp, features: Record<string, FeatureValue>) {
  const u = await t.createUser();
  const key = await t.createMachineKey({ userId: u.userId });
  const tier = await createTier(t, { name: `drive${++tierSeq}`, level: 10 + tierSeq, features });
  await t.services.tiers.membership.assignManually(u.userId, tier.tierId, null);
  return { ...u, headers: { public_key: key.publicKey, secret_key: key.secretKey } };
}
