import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { sql, type Kysely } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/db/database.js';
import { socketConnectionString, startSocketServer, type SocketServer } from '../../src/db/socket-server.js';
import { buildApp } from '../../src/boot/app.js';
import { MemoryRateLimitStore } from '../../src/http/rate-limit/memory-store.js';
import { Event } from '../../src/models/event.js';
import { Page } from '../../src/models/page.js';
import { Post } from '../../src/models/post.js';
import { Product } from '../../src/models/product.js';
import { createServices } from '../../src/boot/compose.js';
import type { Services } from '../../src/services.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { onPostgres } from '../helpers/database.js';
import { connectToServerSocket } from '../helpers/processes.js';
import { createTier } from '../helpers/tiers.js';

/** The server whose caches are under test, reached through its HTTP API. */
interface Node {
  services: Services;
  request(o: InjectOptions): Promise<{ statusCode: number; json: any }>;
}

/**
 * Every cached read changes on the very next request after a write made elsewhere. On PostgreSQL the
 * write is another node's (a second server with its own pool and LISTEN on the same database); on the
 * embedded database it is a client of the server's socket (what the CLI and psql use), in the server's one
 * PGlite session. Writes are plain SQL, as any process could make them: the triggers, not the writing
 * code, tell the caches.
 */
describe(`read caches after a write ${onPostgres ? 'through another node on one PostgreSQL' : "through the embedded database's socket"}`, () => {
  let t: TestApp;
  let reader: Node;
  /** Runs a statement as the other writer (another node's pool, or a socket client). */
  let write: (statement: string) => Promise<void>;
  let cleanup: Array<() => Promise<void>> = [];
  /** Payloads the reader's caches were notified of, in order. */
  const notified: string[] = [];
  let staff: Record<string, string>;
  let member: { headers: Record<string, string>; userId: number };

  beforeAll(async () => {
    t = await createTestApp();
    cleanup.push(() => t.close());
    if (onPostgres) {
      // The second node: its own pool and LISTEN, its own caches; t is the other node (the writer).
      const { rows } = await sql<{ name: string }>`select current_database() as name`.execute(t.services.db);
      const u = new URL(process.env.DATABASE_URL!);
      u.pathname = `/${rows[0]!.name}`;
      const database: Database = await openDatabase({ databaseUrl: u.toString(), pgPoolMax: 4 });
      const services = await createServices({ config: t.services.config, database, clock: t.clock, rateLimitStore: new MemoryRateLimitStore() });
      const app: FastifyInstance = await buildApp(services);
      await app.ready();
      cleanup.unshift(async () => {
        await app.close();
        await services.close();
        await database.close();
      });
      reader = { services, request: async (o) => withJson(await app.inject(o)) };
      write = async (statement) => void (await sql.raw(statement).execute(t.services.db));
    } else {
      const dir = mkdtempSync(path.join(os.tmpdir(), 'gh-rc-'));
      const socket: SocketServer = await startSocketServer(t.database.pglite!, t.database.db, dir);
      const client: pg.Client = await connectToServerSocket({ connectionString: socketConnectionString(dir) });
      cleanup.unshift(async () => {
        await client.end();
        await socket.stop();
        rmSync(dir, { recursive: true, force: true });
      });
      reader = { services: t.services, request: (o) => t.request(o) };
      write = async (statement) => void (await client.query(statement));
    }
    const caches = reader.services.caches;
    const notify = caches.notified.bind(caches);
    caches.notified = (payload) => {
      notified.push(payload);
      notify(payload);
    };
    await until(() => caches.live);
    staff = (await t.staffHeaders()).headers;
    const m = await t.keyHeaders();
    member = { headers: m.headers, userId: m.userId };
  });
  afterAll(async () => {
    for (const step of cleanup) await step();
    cleanup = [];
  });

  /**
   * Runs the write, then waits until the reader has been notified of `payload`. Through the embedded
   * database's socket the notification has arrived before the write returns; from another node it comes
   * over the reader's LISTEN connection a moment after the commit.
   */
  async function writeElsewhere(statement: string, payload: string): Promise<void> {
    const from = notified.length;
    await write(statement);
    if (!onPostgres) expect(notified.slice(from)).toContain(payload);
    else await until(() => notified.slice(from).includes(payload));
  }

  const get = (url: string, headers = member.headers) => reader.request({ method: 'GET', url: `/api/v1/${url}`, headers });

  async function create(className: string, body: Record<string, unknown>): Promise<number> {
    const form = new URLSearchParams(Object.entries(body).map(([k, v]): [string, string] => [k, String(v)])).toString();
    const res = await t.request({ method: 'POST', url: `/api/v1/${className}`, headers: { ...staff, 'content-type': 'application/x-www-form-urlencoded' }, payload: form });
    expect(res.statusCode, res.body).toBe(200);
    return Number(Object.values(res.json.data)[0]);
  }

  it.each([
    { model: Post, body: { pst_title: 'first', pst_is_published: 'true', pst_body: 'text' }, column: 'pst_title' },
    { model: Page, body: { pag_title: 'first', pag_published_time: '2026-02-01 00:00:00' }, column: 'pag_title' },
    { model: Product, body: { pro_name: 'first', pro_link: 'first-product' }, column: 'pro_name' },
    { model: Event, body: { evt_name: 'first' }, column: 'evt_name' },
  ])('serves an edited $model.className from the next request', async ({ model, body, column }) => {
    const id = await create(model.className, body);
    expect((await get(`${model.className}/${id}`)).json.data[column]).toBe('first');
    const cached = reader.services.modelCaches.rowsOf(model)!;
    expect((await get(`${model.className}/${id}`)).json.data[column]).toBe('first');
    expect(cached.size).toBeGreaterThan(0);
    await writeElsewhere(`update ${model.table} set ${column} = 'second' where ${model.primaryKey} = ${id}`, `${model.table}:${id}`);
    const res = await get(`${model.className}/${id}`);
    expect(res.statusCode).toBe(200);
    expect(res.json.data[column]).toBe('second');
  });

  it('stops serving a post unpublished or deleted elsewhere from the next request, and serves it again once republished', async () => {
    const id = await create('Post', { pst_title: 'shown', pst_is_published: 'true' });
    expect((await get(`Post/${id}`)).statusCode).toBe(200);
    await writeElsewhere(`update pst_posts set pst_is_published = false where pst_post_id = ${id}`, `pst_posts:${id}`);
    const hidden = await get(`Post/${id}`);
    expect(hidden.statusCode).toBe(400);
    expect(hidden.json.errortype).toBe('TransactionError');
    await writeElsewhere(`update pst_posts set pst_is_published = true where pst_post_id = ${id}`, `pst_posts:${id}`);
    expect((await get(`Post/${id}`)).statusCode).toBe(200);
    await writeElsewhere(`delete from pst_posts where pst_post_id = ${id}`, `pst_posts:${id}`);
    expect((await get(`Post/${id}`)).statusCode).toBe(400);
  });

  it('lists a post edited, unpublished or deleted elsewhere as it now is, from the next request (listings read rows from the row cache)', async () => {
    const id = await create('Post', { pst_title: 'listed', pst_is_published: 'true', pst_body: 'text' });
    const listed = async () => {
      const res = await get(`Posts?numperpage=1000&sort=pst_post_id&direction=desc`);
      expect(res.statusCode).toBe(200);
      return { total: res.json.num_results as number, row: (res.json.data as Array<Record<string, unknown>>).find((r) => r.pst_post_id === id) };
    };
    const before = await listed();
    expect(before.row?.pst_title).toBe('listed');
    expect(reader.services.modelCaches.rowsOf(Post)!.size).toBeGreaterThan(0);
    await writeElsewhere(`update pst_posts set pst_title = 'relisted' where pst_post_id = ${id}`, `pst_posts:${id}`);
    expect((await listed()).row?.pst_title).toBe('relisted');
    await writeElsewhere(`update pst_posts set pst_is_published = false where pst_post_id = ${id}`, `pst_posts:${id}`);
    const hidden = await listed();
    expect(hidden.row).toBeUndefined();
    expect(hidden.total).toBe(before.total - 1);
    await writeElsewhere(`update pst_posts set pst_is_published = true where pst_post_id = ${id}`, `pst_posts:${id}`);
    expect((await listed()).row?.pst_title).toBe('relisted');
    await writeElsewhere(`delete from pst_posts where pst_post_id = ${id}`, `pst_posts:${id}`);
    expect((await listed()).row).toBeUndefined();
  });

  /** Inserts a post as any process could, and waits until the reader was notified of it. */
  async function insertPost(values: Record<string, unknown>): Promise<number> {
    const at = t.clock.now();
    const { pst_post_id: id } = await (t.services.db as unknown as Kysely<any>)
      .insertInto('pst_posts')
      .values({ pst_usr_user_id: member.userId, pst_title: 'inserted', pst_body: 'text', pst_is_published: true, pst_create_time: at, pst_update_time: at, ...values })
      .returning('pst_post_id')
      .executeTakeFirstOrThrow();
    await until(() => notified.includes(`pst_posts:${id}`));
    return Number(id);
  }

  const listedIds = async (headers = member.headers) => {
    const res = await get('Posts?numperpage=1000&sort=pst_post_id&sdirection=DESC', headers);
    expect(res.statusCode).toBe(200);
    const ids = (res.json.data as Array<{ pst_post_id: number }>).map((r) => r.pst_post_id);
    expect(res.json.num_results).toBe(ids.length);
    return ids;
  };

  it('serves a page of a listing from memory to every reader the statement sees alike, and lists a post added elsewhere from the next request', async () => {
    const listings = reader.services.modelCaches.listingsOf(Post)!;
    const before = await listedIds();
    const hits = listings.hits;
    // Another member without a tier: the page's statement does not use the reader's id, so one entry serves both.
    const other = await t.keyHeaders();
    expect(await listedIds(other.headers)).toEqual(before);
    expect(await listedIds()).toEqual(before);
    expect(listings.hits).toBe(hits + 2);
    const id = await insertPost({ pst_title: 'added elsewhere' });
    expect(await listedIds()).toEqual([id, ...before]);
    expect(listings.hits).toBe(hits + 2);
  });

  it("lists a scheduled post from the first request after its publish time, and a gated post hidden from listings from the first request after its public-after-hours, with no write between", async () => {
    const HOUR = 3600_000;
    await createTier(t, { level: 44, displayName: 'Forty-four' });
    const setting = async (value: boolean) => {
      const from = notified.length;
      await t.services.settings.set('tier_gate_hide_from_listings', value);
      const { rows } = await sql<{ id: number }>`select stg_setting_id as id from stg_settings where stg_name = 'tier_gate_hide_from_listings'`.execute(t.services.db);
      await until(() => notified.slice(from).includes(`stg_settings:${rows[0]!.id}`));
    };
    await setting(true);
    const start = t.clock.nowMs();
    try {
      const scheduled = await insertPost({ pst_title: 'scheduled', pst_published_time: new Date(start + 2 * HOUR) });
      // Published an hour ago, gated to level 44, open to everyone four hours after publishing.
      const opensLater = await insertPost({ pst_title: 'opens later', pst_published_time: new Date(start - HOUR), pst_tier_min_level: 44, pst_tier_public_after_hours: 4 });
      const listings = reader.services.modelCaches.listingsOf(Post)!;
      const now = await listedIds();
      expect(now).not.toContain(scheduled);
      expect(now).not.toContain(opensLater);
      const hits = listings.hits;
      t.clock.set(new Date(start + 2 * HOUR - 1));
      expect(await listedIds()).toEqual(now);
      expect(listings.hits).toBe(hits + 1);
      t.clock.set(new Date(start + 2 * HOUR));
      const published = await listedIds();
      expect(published).toEqual([scheduled, ...now]);
      t.clock.set(new Date(start + 2 * HOUR - 1));
      expect(await listedIds()).toEqual(now);
      t.clock.set(new Date(start + 2 * HOUR + 1));
      expect(await listedIds()).toEqual(published);
      t.clock.set(new Date(start + 2 * HOUR));
      expect(await listedIds()).toEqual(published);
      t.clock.set(new Date(start + 2 * HOUR + 1));
      expect(await listedIds()).toEqual(published);
      t.clock.set(new Date(start + 3 * HOUR - 1));
      expect(await listedIds()).toEqual(published);
      t.clock.set(new Date(start + 3 * HOUR));
      expect(await listedIds()).toEqual([opensLater, scheduled, ...now].sort((a, b) => b - a));
    } finally {
      t.clock.set(new Date(start));
      await setting(false);
    }
  });

  it('lists a scheduled post on pages no cache holds (a filter value never asked before) from the first request after its publish time, and after a write', async () => {
    const HOUR = 3600_000;
    const start = t.clock.nowMs();
    let level = 1000;
    // Each request a filter value no listing has seen: only the time edge (shared by the model's listings) can come from memory.
    const freshPage = async () => {
      const res = await get(`Posts?numperpage=1000&sort=pst_post_id&sdirection=DESC&max_visible_tier_level=${level++}`, member.headers);
      expect(res.statusCode).toBe(200);
      return (res.json.data as Array<{ pst_post_id: number }>).map((r) => r.pst_post_id);
    };
    try {
      const scheduled = await insertPost({ pst_title: 'scheduled, fresh pages', pst_published_time: new Date(start + 5 * HOUR) });
      expect(await freshPage()).not.toContain(scheduled);
      t.clock.set(new Date(start + 5 * HOUR - 1));
      expect(await freshPage()).not.toContain(scheduled);
      t.clock.set(new Date(start + 5 * HOUR));
      expect(await freshPage()).toContain(scheduled);
      // Back before it: a time edge read later is not used for an earlier time.
      t.clock.set(new Date(start + 5 * HOUR - 1));
      expect(await freshPage()).not.toContain(scheduled);
      // A post scheduled sooner, written elsewhere: the table changed, so the shared edge is read again.
      const sooner = await insertPost({ pst_title: 'scheduled sooner', pst_published_time: new Date(start + 5 * HOUR + 1000) });
      t.clock.set(new Date(start + 5 * HOUR));
      expect(await freshPage()).not.toContain(sooner);
      t.clock.set(new Date(start + 5 * HOUR + 1000));
      expect(await freshPage()).toEqual(expect.arrayContaining([scheduled, sooner]));
    } finally {
      t.clock.set(new Date(start));
    }
  });

  it("shows a tier renamed elsewhere in a gated post's tier_access from the next request", async () => {
    const tier = await createTier(t, { level: 41, displayName: 'Gold' });
    const id = await create('Post', { pst_title: 'gated', pst_is_published: 'true', pst_body: 'secret body', pst_tier_min_level: '41' });
    const before = await get(`Post/${id}`);
    expect(before.json.data.tier_access).toMatchObject({ allowed: false, required_tier: { display_name: 'Gold', tier_level: 41 } });
    expect(reader.services.modelCaches.catalogue.size).toBeGreaterThan(0);
    await writeElsewhere(`update sbt_subscription_tiers set sbt_display_name = 'Platinum' where sbt_subscription_tier_id = ${tier.tierId}`, `sbt_subscription_tiers:${tier.tierId}`);
    expect((await get(`Post/${id}`)).json.data.tier_access.required_tier.display_name).toBe('Platinum');
  });

  it("opens a gated post from the next request once the member's tier is granted elsewhere, and closes it once removed", async () => {
    const tier = await createTier(t, { level: 42, displayName: 'Forty-two' });
    const id = await create('Post', { pst_title: 'gated', pst_is_published: 'true', pst_body: 'the whole secret body', pst_tier_min_level: '42' });
    const closed = await get(`Post/${id}`);
    expect(closed.json.data.tier_access.allowed).toBe(false);
    expect(closed.json.data.pst_body).not.toBe('the whole secret body');
    expect(reader.services.keyRows.size).toBeGreaterThan(0);

    await write(`insert into grm_group_members (grm_grp_group_id, grm_foreign_key_id, grm_sbt_subscription_tier_id, grm_subscription_status)
                 values (${tier.groupId}, ${member.userId}, ${tier.tierId}, 'active')`);
    const { rows } = await sql<{ id: number }>`select grm_group_member_id as id from grm_group_members where grm_foreign_key_id = ${member.userId}`.execute(t.services.db);
    const membership = `grm_group_members:${rows[0]!.id}`;
    if (onPostgres) await until(() => notified.includes(membership));
    else expect(notified).toContain(membership);
    const open = await get(`Post/${id}`);
    expect(open.json.data.tier_access.allowed).toBe(true);
    expect(open.json.data.pst_body).toBe('the whole secret body');

    await writeElsewhere(`delete from grm_group_members where grm_group_member_id = ${rows[0]!.id}`, membership);
    const again = await get(`Post/${id}`);
    expect(again.json.data.tier_access.allowed).toBe(false);
    expect(again.json.data.pst_body).not.toBe('the whole secret body');
  });

  it('applies a setting changed elsewhere from the next request', async () => {
    const { rows } = await sql<{ id: number }>`select stg_setting_id as id from stg_settings where stg_name = 'api_require_https'`.execute(t.services.db);
    const setting = `stg_settings:${rows[0]!.id}`;
    expect((await get('auth/session')).statusCode).toBe(200);
    await writeElsewhere(`update stg_settings set stg_value = 'true' where stg_name = 'api_require_https'`, setting);
    const refused = await get('auth/session');
    expect(refused.statusCode).toBe(426);
    expect(refused.json.errortype).toBe('SecurityError');
    await writeElsewhere(`update stg_settings set stg_value = 'false' where stg_name = 'api_require_https'`, setting);
    expect((await get('auth/session')).statusCode).toBe(200);
  });

  it('refuses an API key revoked elsewhere from the next request', async () => {
    const { headers, key } = await t.keyHeaders();
    expect((await get('auth/session', headers)).statusCode).toBe(200);
    expect((await get('auth/session', headers)).statusCode).toBe(200);
    await writeElsewhere(`update apk_api_keys set apk_delete_time = now() where apk_api_key_id = ${key.apiKeyId}`, `apk_api_keys:${key.apiKeyId}`);
    const refused = await get('auth/session', headers);
    expect(refused.statusCode).toBe(401);
    expect(refused.json.errortype).toBe('AuthenticationError');
    expect(refused.json.error).toBe('API key has been revoked');
  });
});

function withJson(res: { statusCode: number; body: string }): { statusCode: number; json: any } {
  let json: any;
  try {
    json = JSON.parse(res.body);
  } catch {
    json = undefined;
  }
  return Object.assign(res, { json });
}

/** Waits (real time, up to 5 s) for something another connection causes; fails the test otherwise. */
async function until(done: () => boolean): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!done()) {
    if (Date.now() > deadline) throw new Error('timed out waiting for a notification');
    await new Promise((r) => setTimeout(r, 2));
  }
}
