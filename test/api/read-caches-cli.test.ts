import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { socketConnectionString } from '../../src/db/socket-server.js';
import { onPostgres } from '../helpers/database.js';
import { connectToServerSocket, freePort, programEnv, runGatehouse, startServerProcess, tempDataDir, type CliResult, type ServerProcess } from '../helpers/processes.js';

/**
 * A real server process on the embedded database, and the CLI (and a psql-like client) writing through
 * its socket while it runs: the server's caches (key rows, tiers, the tier catalogue, post rows, settings)
 * show each write on the very next request, with no wait. The writes' notifications reach the server
 * inside the socket exchange, before the CLI has its answer. (The socket exists only on the embedded
 * database; on PostgreSQL the CLI writes to the database like another node, read-caches.test.ts.)
 */
describe.skipIf(onPostgres)('read caches of a server process after CLI writes through its socket', () => {
  let dataDir: string;
  let env: NodeJS.ProcessEnv;
  let server: ServerProcess;
  let cleanup: () => Promise<void>;
  let admin: Record<string, string>;

  beforeAll(async () => {
    const data = tempDataDir('gh-rcc-');
    dataDir = data.dir;
    env = programEnv({ DATA_DIR: dataDir, PORT: String(await freePort()) });
    server = await startServerProcess(env);
    cleanup = async () => {
      await server.stop('SIGKILL');
      data.remove();
    };
    const initial = JSON.parse(readFileSync(path.join(dataDir, 'initial-admin.json'), 'utf8')) as { public_key: string; secret_key: string };
    admin = { public_key: initial.public_key, secret_key: initial.secret_key };
  });
  afterAll(async () => cleanup?.());

  const ok = (r: CliResult) => {
    expect(r.code, r.stderr).toBe(0);
    return r.json;
  };
  const cli = async (...args: string[]) => ok(await runGatehouse(args, env));
  async function call(method: string, url: string, headers: Record<string, string>, body?: unknown): Promise<{ status: number; json: any }> {
    const res = await fetch(`${server.url}/api/v1/${url}`, {
      method,
      headers: { ...headers, ...(body ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
      ...(body ? { body: new URLSearchParams(body as Record<string, string>).toString() } : {}),
    });
    return { status: res.status, json: await res.json() };
  }
  /** A statement through the server's socket, as psql would send it. */
  async function psql(statement: string): Promise<void> {
    const client = await connectToServerSocket({ connectionString: socketConnectionString(dataDir) });
    try {
      await client.query(statement);
    } finally {
      await client.end();
    }
  }

  it('applies a setting set by the CLI from the next request', async () => {
    // api_require_https is on by default: plain HTTP is refused until the operator switches it off.
    expect((await call('GET', 'auth/session', admin)).status).toBe(426);
    expect(await cli('setting', 'set', 'api_require_https', 'false')).toEqual({ name: 'api_require_https', value: false });
    expect((await call('GET', 'auth/session', admin)).status).toBe(200);
  });

  it('shows every CLI and socket write on the next request: a post edited, a listing page changed, a tier renamed, a tier assigned and removed, a key revoked', async () => {
    const { user_id: userId } = await cli('user', 'create', '--email', 'member@example.com', '--password', 'long enough password');
    const key = await cli('key', 'create', '--user-id', String(userId), '--permission', '4');
    const member = { public_key: key.public_key as string, secret_key: key.secret_key as string };

    const tier = await call('POST', 'SubscriptionTier', admin, { sbt_name: 'gold', sbt_display_name: 'Gold', sbt_tier_level: '3' });
    expect(tier.status, JSON.stringify(tier.json)).toBe(200);
    const tierId = tier.json.data.sbt_subscription_tier_id as number;
    const post = await call('POST', 'Post', admin, { pst_title: 'first', pst_is_published: 'true', pst_body: 'the whole body', pst_tier_min_level: '3' });
    expect(post.status, JSON.stringify(post.json)).toBe(200);
    const postId = post.json.data.pst_post_id as number;

    // Read twice: the second answer comes from the server's caches.
    for (let i = 0; i < 2; i++) {
      const res = await call('GET', `Post/${postId}`, member);
      expect(res.status).toBe(200);
      expect(res.json.data).toMatchObject({ pst_title: 'first', tier_access: { allowed: false, required_tier: { display_name: 'Gold' } } });
    }

    await psql(`update pst_posts set pst_title = 'second' where pst_post_id = ${postId}`);
    expect((await call('GET', `Post/${postId}`, member)).json.data.pst_title).toBe('second');

    // A page of a listing (read twice: the second from memory) follows a write through the socket too.
    const listed = async () => {
      const res = await call('GET', 'Posts?numperpage=50', member);
      expect(res.status).toBe(200);
      return { total: res.json.num_results as number, titles: (res.json.data as Array<{ pst_post_id: number; pst_title: string }>).map((r) => `${r.pst_post_id}:${r.pst_title}`) };
    };
    const before = await listed();
    expect(before.titles).toContain(`${postId}:second`);
    expect(await listed()).toEqual(before);
    await psql(`update pst_posts set pst_is_published = false where pst_post_id = ${postId}`);
    const hidden = await listed();
    expect(hidden.titles).not.toContain(`${postId}:second`);
    expect(hidden.total).toBe(before.total - 1);
    await psql(`update pst_posts set pst_is_published = true, pst_title = 'third' where pst_post_id = ${postId}`);
    const back = await listed();
    expect(back.titles).toContain(`${postId}:third`);
    expect(back.total).toBe(before.total);
    await psql(`update pst_posts set pst_title = 'second' where pst_post_id = ${postId}`);

    await psql(`update sbt_subscription_tiers set sbt_display_name = 'Platinum' where sbt_subscription_tier_id = ${tierId}`);
    expect((await call('GET', `Post/${postId}`, member)).json.data.tier_access.required_tier.display_name).toBe('Platinum');

    expect(await cli('tier', 'assign', '--user-id', String(userId), '--tier', 'gold')).toEqual({ user_id: userId, tier: 'gold' });
    const open = await call('GET', `Post/${postId}`, member);
    expect(open.json.data.tier_access.allowed).toBe(true);
    expect(open.json.data.pst_body).toBe('the whole body');

    await cli('tier', 'assign', '--user-id', String(userId), '--tier', 'none');
    const closed = await call('GET', `Post/${postId}`, member);
    expect(closed.json.data.tier_access.allowed).toBe(false);
    expect(closed.json.data.pst_body).not.toBe('the whole body');

    expect(await cli('key', 'revoke', '--api-key-id', String(key.api_key_id))).toEqual({ revoked: true });
    const refused = await call('GET', 'auth/session', member);
    expect(refused.status).toBe(401);
    expect(refused.json.errortype).toBe('AuthenticationError');
  });

  it('keeps the socket client unaware of the notifications meant for the server', async () => {
    const client = await connectToServerSocket({ connectionString: socketConnectionString(dataDir) });
    const seen: string[] = [];
    client.on('notification', (n) => seen.push(n.channel));
    try {
      await client.query(`update stg_settings set stg_value = stg_value where stg_name = 'api_require_https'`);
      await client.query('select 1');
    } finally {
      await client.end();
    }
    expect(seen).toEqual([]);
    expect((await call('GET', 'auth/session', admin)).status).toBe(200);
  });
});
