import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { revokeKey } from '../../src/accounts/api-keys.js';
import { ROW_CHANGES } from '../../src/db/change-feed.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { onPostgres } from '../helpers/database.js';
import { createTier } from '../helpers/tiers.js';

// Each changes at least one row (the triggers notify per row written); the test makes a tier membership first.
const PRINCIPAL_TABLE_WRITES: Record<string, string> = {
  apk_api_keys: `update apk_api_keys set apk_is_active = apk_is_active`,
  usr_users: `update usr_users set usr_nickname = usr_nickname`,
  grm_group_members: `update grm_group_members set grm_assignment_method = grm_assignment_method`,
  sbt_subscription_tiers: `update sbt_subscription_tiers set sbt_name = sbt_name`,
};

/** Waits (on real time, up to 5 s) for something another process causes; fails the test otherwise. */
async function eventually(what: string, done: () => boolean): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe('key rows across requests', () => {
  let t: TestApp;
  let invalidations = 0;
  /** The test database as another process reaches it (PostgreSQL only). */
  let otherProcessUrl = '';

  beforeAll(async () => {
    t = await createTestApp();
    const cache = t.services.keyRows;
    const invalidate = cache.invalidate.bind(cache);
    cache.invalidate = () => {
      invalidations++;
      invalidate();
    };
    await eventually('the change feed', () => cache.live);
    if (onPostgres) {
      const { rows } = await sql<{ name: string }>`select current_database() as name`.execute(t.services.db);
      const u = new URL(process.env.DATABASE_URL!);
      u.pathname = `/${rows[0]!.name}`;
      otherProcessUrl = u.toString();
    }
  });
  afterAll(async () => t.close());

  const session = (headers: Record<string, string>) => t.request({ method: 'GET', url: '/api/v1/auth/session', headers });

  async function asOtherProcess(statement: string): Promise<void> {
    const client = new pg.Client({ connectionString: otherProcessUrl });
    await client.connect();
    try {
      await client.query(statement);
    } finally {
      await client.end();
    }
  }

  /**
   * Waits until every notification committed so far has arrived (this process's own writes notify it too,
   * a moment after they forgot the cache locally): they arrive in commit order, so a marker sent now
   * arrives after all of them.
   */
  async function settle(): Promise<void> {
    if (!onPostgres) return;
    const before = invalidations;
    await asOtherProcess(`select pg_notify('${ROW_CHANGES}', 'apk_api_keys')`);
    await eventually('the marker notification', () => invalidations > before);
  }

  it('keeps a key row between requests, on PostgreSQL and on the embedded database', async () => {
    const { headers } = await t.keyHeaders();
    // The first use writes the key's last-used time, which forgets what the read kept.
    expect((await session(headers)).statusCode).toBe(200);
    await settle();
    expect((await session(headers)).statusCode).toBe(200);
    expect(t.services.keyRows.size).toBe(1);
    expect(t.services.keyRows.live).toBe(true);
  });

  it('refuses a session key at once after auth/logout', async () => {
    const { email, password } = await t.createUser();
    const { headers } = await t.login(email, password);
    expect((await session(headers)).statusCode).toBe(200);
    expect((await t.request({ method: 'POST', url: '/api/v1/auth/logout', headers })).statusCode).toBe(200);
    const after = await session(headers);
    expect(after.statusCode).toBe(401);
    expect(after.json.errortype).toBe('AuthenticationError');
  });

  it('refuses a key at once after this process revokes it or disables its user', async () => {
    const revoked = await t.keyHeaders();
    const disabled = await t.keyHeaders();
    expect((await session(revoked.headers)).statusCode).toBe(200);
    expect((await session(disabled.headers)).statusCode).toBe(200);
    await settle();
    expect((await session(revoked.headers)).statusCode).toBe(200);
    expect((await session(disabled.headers)).statusCode).toBe(200);
    expect(t.services.keyRows.size).toBe(2);
    await revokeKey(t.services.db, revoked.key.apiKeyId, t.clock.now());
    await t.services.db.updateTable('usr_users').set({ usr_is_disabled: true }).where('usr_user_id', '=', disabled.userId).execute();
    expect((await session(revoked.headers)).statusCode).toBe(401);
    expect((await session(disabled.headers)).statusCode).toBe(401);
  });

  it("shows a permission change made in this process on the next request's principal", async () => {
    const { headers, userId } = await t.keyHeaders();
    expect((await session(headers)).json.data.permission).toBe(0);
    await settle();
    expect((await session(headers)).json.data.permission).toBe(0);
    expect(t.services.keyRows.size).toBe(1);
    await t.services.db.transaction().execute(async (trx) => {
      await trx.updateTable('usr_users').set({ usr_permission: 5 }).where('usr_user_id', '=', userId).execute();
    });
    expect((await session(headers)).json.data.permission).toBe(5);
  });

  it('refuses a key revoked by another process once its notification arrives', async (ctx) => {
    if (!onPostgres) return ctx.skip();
    const { headers, key } = await t.keyHeaders();
    expect((await session(headers)).statusCode).toBe(200);
    await settle();
    expect((await session(headers)).statusCode).toBe(200);
    expect(t.services.keyRows.size).toBe(1);
    const before = invalidations;
    await asOtherProcess(`update apk_api_keys set apk_delete_time = now() where apk_api_key_id = ${Number(key.apiKeyId)}`);
    await eventually('the notification', () => invalidations > before);
    const after = await session(headers);
    expect(after.statusCode).toBe(401);
    expect(after.json.errortype).toBe('AuthenticationError');
  });

  it.each(Object.entries(PRINCIPAL_TABLE_WRITES))('notifies every server when another process writes %s', async (table, statement) => {
    if (!onPostgres) return;
    const { userId } = await t.createUser();
    const tier = await createTier(t, { level: 7 });
    await t.services.tiers.membership.assignManually(userId, tier.tierId, null);
    await settle();
    const before = invalidations;
    await asOtherProcess(statement);
    await eventually(`a notification for ${table}`, () => invalidations > before);
  });

  it('reads every key while the change feed is down, and caches again once it is back', async (ctx) => {
    if (!onPostgres) return ctx.skip();
    const { headers } = await t.keyHeaders();
    await asOtherProcess(`select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and query ilike 'listen %'`);
    await eventually('the feed to go down', () => !t.services.keyRows.live);
    expect((await session(headers)).statusCode).toBe(200);
    expect(t.services.keyRows.size).toBe(0);
    await eventually('the feed to come back', () => t.services.keyRows.live);
    expect((await session(headers)).statusCode).toBe(200);
    expect(t.services.keyRows.size).toBe(1);
  });
});
