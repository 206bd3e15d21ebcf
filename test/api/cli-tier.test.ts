import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openCliDatabase } from '../../src/boot/cli-database.js';
import { loadConfig } from '../../src/config.js';
import { TestClock } from '../../src/lib/clock.js';
import { FeatureRegistry } from '../../src/tiers/feature-registry.js';
import { createTier } from '../../src/tiers/tiers.js';
import { onPostgres } from '../helpers/database.js';
import { freePort, programEnv, runGatehouse, scratchPostgres, startServerProcess, tempDataDir, type CliResult } from '../helpers/processes.js';

// `gatehouse tier list | assign | audit`, run as the operator runs them: the built program reaching a running
// server's embedded database through its socket (PGlite), or a fresh PostgreSQL database.
describe(`operator CLI: tier commands (${onPostgres ? 'PostgreSQL' : 'PGlite through the server socket'})`, { timeout: 120_000 }, () => {
  let env: NodeJS.ProcessEnv;
  let cleanup: () => Promise<void>;
  let userId: number;
  const cli = (...args: string[]): Promise<CliResult> => runGatehouse(args, env);

  function expectBadInput(r: CliResult, stderrMatch: RegExp) {
    expect(r.code, r.stderr).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(stderrMatch);
  }

  beforeAll(async () => {
    const data = tempDataDir('gh-cli-tier-');
    if (onPostgres) {
      const db = await scratchPostgres();
      env = programEnv({ DATA_DIR: data.dir, DATABASE_URL: db.url });
      cleanup = async () => {
        await db.drop();
        data.remove();
      };
    } else {
      env = programEnv({ DATA_DIR: data.dir, PORT: String(await freePort()) });
      const server = await startServerProcess(env);
      cleanup = async () => {
        await server.stop();
        data.remove();
      };
    }
    expect((await cli('migrate')).code).toBe(0);
    // Tiers are made by staff over CRUD or the admin screens; seed them through the same service.
    const io = { stdout: () => {}, stderr: () => {}, env };
    const opened = await openCliDatabase(loadConfig(env), io);
    try {
      const ctx = { db: opened.database.db, clock: new TestClock(), registry: FeatureRegistry.load(), createdBy: null };
      await createTier(ctx, { sbt_name: 'gold', sbt_display_name: 'Gold', sbt_tier_level: 30, sbt_features: { drive_storage_bytes: 100, drive_share_links: true } });
      await createTier(ctx, { sbt_name: 'basic', sbt_display_name: 'Basic', sbt_tier_level: 10 });
      await createTier(ctx, { sbt_name: 'legacy', sbt_display_name: 'Legacy', sbt_tier_level: 5, sbt_is_active: false });
    } finally {
      await opened.close();
    }
    const user = await cli('user', 'create', '--email', 'member@example.com', '--password', 'long enough');
    expect(user.code, user.stderr).toBe(0);
    userId = user.json.user_id;
  });
  afterAll(async () => cleanup?.());

  it('tier assign puts the user in the named tier as a manual assignment', async () => {
    const r = await cli('tier', 'assign', '--user-id', String(userId), '--tier', 'gold');
    expect(r.code, r.stderr).toBe(0);
    expect(r.json).toEqual({ user_id: userId, tier: 'gold' });
  });

  it('tier list prints every tier with its level, state, member count and features', async () => {
    const r = await cli('tier', 'list');
    expect(r.code, r.stderr).toBe(0);
    expect(r.json.tiers.map((x: Record<string, unknown>) => [x.name, x.display_name, x.tier_level, x.is_active, x.member_count])).toEqual([
      ['legacy', 'Legacy', 5, false, 0],
      ['basic', 'Basic', 10, true, 0],
      ['gold', 'Gold', 30, true, 1],
    ]);
    expect(r.json.tiers[2].features).toEqual({ drive_storage_bytes: 100, drive_share_links: true });
  });

  it('tier audit lists, for every active tier, the declared feature keys it has no explicit value for', async () => {
    const r = await cli('tier', 'audit');
    expect(r.code, r.stderr).toBe(0);
    expect(r.json).toEqual({
      tiers: [
        { name: 'basic', missing: ['drive_max_file_bytes', 'drive_share_links', 'drive_storage_bytes', 'drive_versioning_depth', 'mailbox_fleet_max_domains', 'mailbox_fleet_slot'] },
        { name: 'gold', missing: ['drive_max_file_bytes', 'drive_versioning_depth', 'mailbox_fleet_max_domains', 'mailbox_fleet_slot'] },
      ],
    });
  });

  it('tier assign --tier none removes the user from every tier', async () => {
    const r = await cli('tier', 'assign', '--user-id', String(userId), '--tier', 'none');
    expect(r.code, r.stderr).toBe(0);
    expect(r.json).toEqual({ user_id: userId, tier: null });
    const list = await cli('tier', 'list');
    expect(list.json.tiers.map((x: Record<string, unknown>) => x.member_count)).toEqual([0, 0, 0]);
  });

  it('refuses bad input with exit 2: unknown tier, inactive tier, unknown user, missing or malformed options, unknown subcommand', async () => {
    expectBadInput(await cli('tier', 'assign', '--user-id', String(userId), '--tier', 'platinum'), /No tier named 'platinum'/);
    expectBadInput(await cli('tier', 'assign', '--user-id', String(userId), '--tier', 'legacy'), /Tier legacy is not active/);
    expectBadInput(await cli('tier', 'assign', '--user-id', '999999', '--tier', 'gold'), /No user with id 999999/);
    expectBadInput(await cli('tier', 'assign', '--user-id', String(userId)), /--tier is required/);
    expectBadInput(await cli('tier', 'assign', '--user-id', 'abc', '--tier', 'gold'), /--user-id must be a positive integer/);
    expectBadInput(await cli('tier', 'list', 'extra'), /usage: gatehouse tier list/);
    expectBadInput(await cli('tier', 'promote'), /usage: gatehouse tier list\n\s+gatehouse tier assign --user-id N --tier NAME\|none\n\s+gatehouse tier audit/);
  });
});
