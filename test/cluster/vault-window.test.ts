import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '../../src/accounts/users.js';
import { randomHex } from '../../src/lib/crypto.js';
import { systemClock } from '../../src/lib/clock.js';
import { createTier as createTierService } from '../../src/tiers/tiers.js';
import { setSettings, startCluster, type Cluster, type Node } from './harness.js';

// The vault window across server processes (DESIGN 10, issue 27): it lives sealed in the shared store
// (Redis), so a window opened through node A is open through node B for the same browser session and for
// no other; and a sealed Drive file uploaded through one node (chunks alternating) reads back through the
// other, and answers 423 through both once the window is closed through either.

let c: Cluster;
let A: Node;
let B: Node;
beforeAll(async () => {
  c = await startCluster(2);
  [A, B] = c.nodes as [Node, Node];
  await setSettings(c, { api_require_https: false, drive_active: true, drive_upload_chunk_bytes: 64 * 1024 });
});
afterAll(async () => c?.close());

/** A browser session's cookies, usable against either node (no sticky sessions). */
class Session {
  private cookies = new Map<string, string>();

  async request(node: Node, method: string, url: string, o: { form?: Record<string, string>; json?: unknown; raw?: Buffer; headers?: Record<string, string> } = {}) {
    const headers: Record<string, string> = { cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; '), ...o.headers };
    let body: string | Buffer | undefined;
    if (o.form) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      body = new URLSearchParams(o.form).toString();
    } else if (o.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(o.json);
    } else if (o.raw) body = o.raw;
    if (method !== 'GET' && !o.form) headers['x-service-csrf'] = this.cookies.get('service_api_csrf') ?? '';
    const res = await fetch(`http://127.0.0.1:${node.port}${url}`, { method, headers, body, redirect: 'manual' });
    for (const raw of res.headers.getSetCookie()) {
      const [pair] = raw.split(';');
      const at = pair!.indexOf('=');
      this.cookies.set(pair!.slice(0, at), pair!.slice(at + 1));
    }
    const bytes = Buffer.from(await res.arrayBuffer());
    let json: any;
    try {
      json = JSON.parse(bytes.toString('utf8'));
    } catch {
      json = undefined;
    }
    return { status: res.status, bytes, text: bytes.toString('utf8'), json };
  }

  action(node: Node, name: string, payload: Record<string, unknown> = {}) {
    return this.request(node, 'POST', `/api/v1/action/${name}`, { json: payload });
  }

  static async signIn(node: Node, email: string, password: string): Promise<Session> {
    const s = new Session();
    const login = await s.request(node, 'GET', '/login');
    const m = /name="form_token" value="([0-9a-f]*)"/.exec(login.text.slice(login.text.indexOf('action="/login"')));
    const signed = await s.request(node, 'POST', '/login', { form: { email, password, form_token: m![1]!, next: '/' } });
    expect(signed.status).toBe(303);
    return s;
  }
}

describe('the vault window on two nodes over one PostgreSQL and Redis', () => {
  it('is open through B for the session that opened it through A, for no other session, and a sealed Drive file follows it', async () => {
    const password = `pw-${randomHex(8)}`;
    const email = `vault-${randomHex(5)}@example.com`;
    const userId = await createUser(c.control.db, { email, password, permission: 0, firstName: 'Vault', lastName: 'Cluster', now: systemClock.now() });
    const tierId = await createTierService(
      { db: c.control.db, clock: systemClock, registry: c.control.tiers.registry, createdBy: null },
      { sbt_name: `vault${Date.now()}`, sbt_display_name: 'VAULT', sbt_tier_level: 60, sbt_features: { drive_storage_bytes: 10_000_000, drive_max_file_bytes: 5_000_000, drive_share_links: true, drive_versioning_depth: 3 }, sbt_is_active: true },
    );
    await c.control.tiers.membership.assignManually(userId, tierId, null);

    const mine = await Session.signIn(A, email, password);
    const other = await Session.signIn(B, email, password);
    expect((await mine.action(A, 'vault_setup_options', { password })).status).toBe(200);
    const setup = await mine.action(A, 'vault_setup_verify', { acknowledge_loss: true });
    expect(setup.status, setup.text).toBe(200);
    const codes = setup.json.data.recovery_codes as string[];

    // Opened through A: open through B for this session, not for the same user's other session.
    expect((await mine.action(B, 'vault_status')).json.data.unlocked).toBe(true);
    expect((await mine.action(B, 'vault_heartbeat')).json.data).toEqual({ alive: true });
    expect((await other.action(A, 'vault_status')).json.data.unlocked).toBe(false);
    expect((await other.action(B, 'vault_heartbeat')).json.data).toEqual({ alive: false });

    // A sealed file: folder through B, chunks alternating, completed through A, read back through B.
    const folder = await mine.action(B, 'drive_folder_create', { name: 'Sealed', sealed: true });
    expect(folder.status, folder.text).toBe(200);
    const CHUNK = 64 * 1024;
    const bytes = Buffer.alloc(3 * CHUNK + 99);
    for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 31 + 7) & 0xff;
    const init = await mine.action(A, 'drive_upload_init', { name: 'cluster secret.bin', size_bytes: bytes.length, folder_id: folder.json.data.folder.folder_id });
    expect(init.status, init.text).toBe(200);
    const token = init.json.data.upload_token as string;
    let n = 0;
    for (let start = 0; start < bytes.length; start += CHUNK, n++) {
      const part = bytes.subarray(start, start + CHUNK);
      const res = await mine.request(n % 2 ? A : B, 'PUT', `/api/v1/drive_upload/${token}`, {
        raw: part,
        headers: { 'content-type': 'application/octet-stream', 'content-range': `bytes ${start}-${start + part.length - 1}/${bytes.length}` },
      });
      expect(res.status, res.text).toBe(200);
    }
    const done = await mine.action(A, 'drive_upload_complete', { upload_token: token });
    expect(done.status, done.text).toBe(200);
    expect(done.json.data.file).toMatchObject({ name: 'cluster secret.bin', sealed: true, content_locked: false });
    const fileId = done.json.data.file.file_id as number;
    const read = await mine.request(B, 'GET', `/drive/file/${fileId}`);
    expect(read.status).toBe(200);
    expect(read.bytes.equals(bytes)).toBe(true);
    const ranged = await mine.request(A, 'GET', `/drive/file/${fileId}`, { headers: { range: `bytes=${CHUNK - 5}-${CHUNK + 4}` } });
    expect(ranged.status).toBe(206);
    expect(ranged.bytes.equals(bytes.subarray(CHUNK - 5, CHUNK + 5))).toBe(true);
    expect((await other.request(A, 'GET', `/drive/file/${fileId}`)).status).toBe(423);
    const listedByOther = await other.action(B, 'drive_list', { folder_id: folder.json.data.folder.folder_id });
    expect(listedByOther.json.data).toMatchObject({ locked: true, files: [{ name: null, content_locked: true }] });

    // Locked through B: closed through A too.
    expect((await mine.action(B, 'vault_lock')).json.data.unlocked).toBe(false);
    expect((await mine.action(A, 'vault_status')).json.data.unlocked).toBe(false);
    expect((await mine.request(A, 'GET', `/drive/file/${fileId}`)).status).toBe(423);

    // Unlocked by a code through B: open through A.
    expect((await mine.action(B, 'vault_unlock_recovery', { password, code: codes[0] })).status).toBe(200);
    const again = await mine.request(A, 'GET', `/drive/file/${fileId}`);
    expect(again.status).toBe(200);
    expect(again.bytes.equals(bytes)).toBe(true);
  });
});
