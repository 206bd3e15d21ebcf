import { sql, type KyselyPlugin, type PluginTransformQueryArgs, type PluginTransformResultArgs, type QueryResult, type RootOperationNode, type UnknownRow } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TierInputError } from '../../src/tiers/errors.js';
import { DRIVE_FAIL_CLOSED, TierSystem, driveFeatures } from '../../src/tiers/index.js';
import { tierAssign, tierAudit, tierList } from '../../src/tiers/cli-commands.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { changeRows, createTier, type TestTier } from '../helpers/tiers.js';

class QueryCounter implements KyselyPlugin {
  count = 0;
  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    this.count++;
    return args.node;
  }
  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return args.result;
  }
}

let t: TestApp;
let pro: TestTier;
let bare: TestTier;
beforeAll(async () => {
  t = await createTestApp();
  pro = await createTier(t, {
    name: 'pro',
    level: 30,
    features: {
      drive_storage_bytes: 10_000_000_000,
      drive_max_file_bytes: 2_000_000_000,
      drive_share_links: true,
      drive_versioning_depth: 5,
      mailbox_fleet_slot: true,
    },
  });
  bare = await createTier(t, { name: 'bare', level: 5 });
});
afterAll(async () => t.close());

async function member(tier: TestTier | null): Promise<number> {
  const { userId } = await t.createUser();
  if (tier) await t.services.tiers.membership.assignManually(userId, tier.tierId, null);
  return userId;
}

describe('feature reads', () => {
  it("returns the tier's value when the tier row has an entry", async () => {
    const userId = await member(pro);
    const reader = t.services.tiers.readerFor({});
    expect(await reader.getUserFeature(userId, 'drive_storage_bytes', 123)).toBe(10_000_000_000);
    expect(await reader.getUserFeature(userId, 'mailbox_fleet_slot', false)).toBe(true);
  });

  it('returns the declared fallback when the tier row has no entry for the key', async () => {
    const userId = await member(pro);
    const reader = t.services.tiers.readerFor({});
    expect(await reader.getUserFeature(userId, 'mailbox_fleet_max_domains', 42)).toBe(0);
  });

  it("returns the caller's default when the user is tierless", async () => {
    const userId = await member(null);
    const reader = t.services.tiers.readerFor({});
    expect(await reader.getUserFeature(userId, 'mailbox_fleet_max_domains', 42)).toBe(42);
    expect(await reader.getUserFeature(userId, 'mailbox_fleet_slot', true)).toBe(true);
  });

  it('treats a member of an inactive or deleted tier as tierless', async () => {
    const fading = await createTier(t, { name: 'fading', level: 8, features: { mailbox_fleet_max_domains: 3 } });
    const userId = await member(fading);
    expect(await t.services.tiers.readerFor({}).getUserFeature(userId, 'mailbox_fleet_max_domains', 42)).toBe(3);
    await t.services.db.updateTable('sbt_subscription_tiers').set({ sbt_is_active: false }).where('sbt_subscription_tier_id', '=', fading.tierId).execute();
    expect(await t.services.tiers.readerFor({}).getUserFeature(userId, 'mailbox_fleet_max_domains', 42)).toBe(42);
    await t.services.db
      .updateTable('sbt_subscription_tiers')
      .set({ sbt_is_active: true, sbt_delete_time: t.clock.now() })
      .where('sbt_subscription_tier_id', '=', fading.tierId)
      .execute();
    expect(await t.services.tiers.readerFor({}).getUserFeature(userId, 'mailbox_fleet_max_domains', 42)).toBe(42);
  });

  it('refuses a key that no definition declares', async () => {
    const userId = await member(pro);
    await expect(t.services.tiers.readerFor({}).getUserFeature(userId, 'teleport', 1)).rejects.toThrow("'teleport' is not a declared tier feature");
  });

  it('Drive features fail closed for a tierless user: no storage, no uploads, no links, no history', async () => {
    const userId = await member(null);
    expect(await driveFeatures(t.services.tiers.readerFor({}), userId)).toEqual({ storageBytes: 0, maxFileBytes: 0, shareLinks: false, versioningDepth: 0 });
    expect(DRIVE_FAIL_CLOSED).toEqual({ storageBytes: 0, maxFileBytes: 0, shareLinks: false, versioningDepth: 0 });
  });

  it("Drive features come from the tier, and a tier without Drive values gets the declared fallbacks (closed)", async () => {
    expect(await driveFeatures(t.services.tiers.readerFor({}), await member(pro))).toEqual({
      storageBytes: 10_000_000_000,
      maxFileBytes: 2_000_000_000,
      shareLinks: true,
      versioningDepth: 5,
    });
    expect(await driveFeatures(t.services.tiers.readerFor({}), await member(bare))).toEqual({ storageBytes: 0, maxFileBytes: 0, shareLinks: false, versioningDepth: 0 });
  });

  it("reads are cheap: one indexed query for the user's tier per request, shared by every read in it", async () => {
    const userId = await member(pro);
    const counter = new QueryCounter();
    const tiers = new TierSystem(t.services.db.withPlugin(counter), t.clock, t.services.tiers.registry);
    const request = {};
    const reader = tiers.readerFor(request);
    expect(tiers.readerFor(request)).toBe(reader);
    await Promise.all([reader.getUserFeature(userId, 'mailbox_fleet_slot', false), driveFeatures(reader, userId)]);
    await reader.getUserFeature(userId, 'drive_share_links', false);
    await tiers.readerFor(request).allFeatures(userId);
    expect(counter.count).toBe(1);
    // A new request reads again.
    await tiers.readerFor({}).getUserFeature(userId, 'drive_share_links', false);
    expect(counter.count).toBe(2);
  });

  it('the tier read can use the one-tier-per-user index', async () => {
    // With sequential scans priced out, the planner must find an index whose predicate the read matches;
    // on a few rows it might otherwise scan, which says nothing about the index.
    const plan = await t.services.db.transaction().execute(async (trx) => {
      await sql`set local enable_seqscan = off`.execute(trx);
      const { rows } = await sql<{ 'QUERY PLAN': string }>`
        explain select sbt_subscription_tier_id from grm_group_members
        inner join sbt_subscription_tiers on sbt_subscription_tier_id = grm_sbt_subscription_tier_id
        where grm_foreign_key_id = ${1} and grm_sbt_subscription_tier_id is not null`.execute(trx);
      return rows.map((r) => r['QUERY PLAN']).join('\n');
    });
    expect(plan).toMatch(/grm_group_members_one_tier/);
  });
});

describe('session user summary', () => {
  it('carries tier null for a tierless user, and the tier with every declared feature resolved once assigned, in login and GET /auth/session', async () => {
    const { userId, email, password } = await t.createUser();
    const first = await t.login(email, password);
    expect(first.body.data.user.tier).toBeNull();
    const session = await t.request({ method: 'GET', url: '/api/v1/auth/session', headers: first.headers });
    expect(session.json.data.tier).toBeNull();

    await t.services.tiers.membership.grantTierFromPurchase(userId, { productId: 1, tierId: pro.tierId }, 'card_processor', null);
    const expected = {
      name: 'pro',
      tier_level: 30,
      features: {
        drive_storage_bytes: 10_000_000_000,
        drive_max_file_bytes: 2_000_000_000,
        drive_share_links: true,
        drive_versioning_depth: 5,
        mailbox_fleet_slot: true,
        mailbox_fleet_max_domains: 0,
      },
    };
    const second = await t.login(email, password);
    expect(second.body.data.user.tier).toEqual(expected);
    const after = await t.request({ method: 'GET', url: '/api/v1/auth/session', headers: first.headers });
    expect(after.statusCode).toBe(200);
    expect(after.json.data).toEqual({ user_id: userId, display_name: expect.any(String), email, permission: 0, tier: expected });

    await t.services.tiers.membership.removeFromAllTiers(userId, 'expiry', null);
    const gone = await t.request({ method: 'GET', url: '/api/v1/auth/session', headers: first.headers });
    expect(gone.json.data.tier).toBeNull();
  });
});

describe('feature coverage audit and tier CLI commands', () => {
  let audit: TestApp;
  beforeAll(async () => {
    audit = await createTestApp();
    await createTier(audit, { name: 'full', level: 30, features: { drive_storage_bytes: 1, drive_max_file_bytes: 1, drive_share_links: true, drive_versioning_depth: 1, mailbox_fleet_slot: true, mailbox_fleet_max_domains: 1 } });
    await createTier(audit, { name: 'partial', level: 20, features: { drive_storage_bytes: 5, mailbox_fleet_slot: false } });
    await createTier(audit, { name: 'empty', level: 10 });
    await createTier(audit, { name: 'retired', level: 40, active: false });
  });
  afterAll(async () => audit.close());

  it('lists, for every active tier, exactly the declared feature keys it has no explicit value for', async () => {
    const expected = {
      tiers: [
        { name: 'empty', missing: ['drive_max_file_bytes', 'drive_share_links', 'drive_storage_bytes', 'drive_versioning_depth', 'mailbox_fleet_max_domains', 'mailbox_fleet_slot'] },
        { name: 'partial', missing: ['drive_max_file_bytes', 'drive_share_links', 'drive_versioning_depth', 'mailbox_fleet_max_domains'] },
        { name: 'full', missing: [] },
      ],
    };
    expect(await audit.services.tiers.audit()).toEqual(expected);
    expect(await tierAudit(audit.services.db)).toEqual(expected);
  });

  it('gives the management surface the same audit with levels and the declared keys', async () => {
    const report = await audit.services.tiers.auditReport();
    expect(report.declared_features).toEqual(['drive_max_file_bytes', 'drive_share_links', 'drive_storage_bytes', 'drive_versioning_depth', 'mailbox_fleet_max_domains', 'mailbox_fleet_slot']);
    expect(report.tiers.map((r) => [r.name, r.tier_level, r.missing.length])).toEqual([
      ['empty', 10, 6],
      ['partial', 20, 4],
      ['full', 30, 0],
    ]);
  });

  it('tier list prints every tier with its level, state and member count', async () => {
    const { userId } = await audit.createUser();
    await tierAssign(audit.services.db, audit.clock, userId, 'partial');
    const { tiers } = await tierList(audit.services.db);
    expect(tiers.map((x) => [x.name, x.tier_level, x.is_active, x.member_count])).toEqual([
      ['empty', 10, true, 0],
      ['partial', 20, true, 1],
      ['full', 30, true, 0],
      ['retired', 40, false, 0],
    ]);
    expect(tiers[1]).toMatchObject({ display_name: 'PARTIAL', features: { drive_storage_bytes: 5, mailbox_fleet_slot: false } });
  });

  it('tier assign makes a manual assignment by name, or to none, and refuses unknown tiers and users', async () => {
    const { userId } = await audit.createUser();
    expect(await tierAssign(audit.services.db, audit.clock, userId, 'full')).toEqual({ user_id: userId, tier: 'full' });
    expect(await tierAssign(audit.services.db, audit.clock, userId, 'none')).toEqual({ user_id: userId, tier: null });
    expect((await changeRows(audit, userId)).map((c) => [c.cht_change_reason, c.cht_changed_by_usr_user_id])).toEqual([
      ['manual', null],
      ['manual', null],
    ]);
    await expect(tierAssign(audit.services.db, audit.clock, userId, 'nonesuch')).rejects.toThrow(new TierInputError("No tier named 'nonesuch'", { tier: 'not found' }));
    await expect(tierAssign(audit.services.db, audit.clock, 987_654, 'full')).rejects.toThrow('No user with id 987654');
    await expect(tierAssign(audit.services.db, audit.clock, 0, 'full')).rejects.toThrow('--user-id must be a positive integer');
  });
});
