import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createServices } from '../../src/boot/compose.js';
import { FeatureDefinitionError } from '../../src/tiers/feature-registry.js';
import { TierInputError } from '../../src/tiers/errors.js';
import { findGroups } from '../../src/tiers/groups.js';
import { createTier as createTierService, updateTier } from '../../src/tiers/tiers.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createTier } from '../helpers/tiers.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

const ctx = () => ({ db: t.services.db, clock: t.clock, registry: t.services.tiers.registry, createdBy: null });

async function refusal(p: Promise<unknown>): Promise<TierInputError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(TierInputError);
    return e as TierInputError;
  }
  throw new Error('expected a refusal');
}

async function countRows(): Promise<{ groups: number; tiers: number }> {
  const g = await t.services.db.selectFrom('grp_groups').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  const s = await t.services.db.selectFrom('sbt_subscription_tiers').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  return { groups: Number(g.n), tiers: Number(s.n) };
}

describe('tier creation', () => {
  it("creates the tier's group with category 'subscription_tier', named after the tier", async () => {
    const tier = await createTier(t, { name: 'basic', level: 10, features: { drive_share_links: true } });
    const row = await t.services.db.selectFrom('sbt_subscription_tiers').selectAll().where('sbt_subscription_tier_id', '=', tier.tierId).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ sbt_name: 'basic', sbt_display_name: 'BASIC', sbt_tier_level: 10, sbt_is_active: true, sbt_features: { drive_share_links: true } });
    const group = await t.services.db.selectFrom('grp_groups').selectAll().where('grp_group_id', '=', row.sbt_grp_group_id).executeTakeFirstOrThrow();
    expect(group).toMatchObject({ grp_name: 'basic', grp_category: 'subscription_tier', grp_delete_time: null });
    expect(group.grp_create_time).toEqual(t.clock.now());
  });

  it('creates both in one transaction: a failure writing the tier leaves neither the tier nor its group', async () => {
    await sql`alter table sbt_subscription_tiers add constraint test_refuse_boom check (sbt_name <> 'boom')`.execute(t.services.db);
    try {
      const before = await countRows();
      await expect(createTierService(ctx(), { sbt_name: 'boom', sbt_display_name: 'Boom', sbt_tier_level: 5 })).rejects.toThrow(/test_refuse_boom/);
      expect(await countRows()).toEqual(before);
      expect(await findGroups(t.services.db, { group_name: 'boom' })).toEqual([]);
    } finally {
      await sql`alter table sbt_subscription_tiers drop constraint test_refuse_boom`.execute(t.services.db);
    }
  });

  it("refuses 'Tier already exists' when a tier of that name exists", async () => {
    await createTier(t, { name: 'silver', level: 20 });
    const before = await countRows();
    const err = await refusal(createTierService(ctx(), { sbt_name: 'silver', sbt_display_name: 'Silver again', sbt_tier_level: 25 }));
    expect(err.message).toBe('Tier already exists');
    expect(err.fields).toEqual({ sbt_name: 'Tier already exists' });
    expect(await countRows()).toEqual(before);
  });

  it("refuses 'Tier already exists' when a tier group of that name exists without a tier", async () => {
    await t.services.db.insertInto('grp_groups').values({ grp_name: 'orphan', grp_category: 'subscription_tier' }).execute();
    const err = await refusal(createTierService(ctx(), { sbt_name: 'orphan', sbt_display_name: 'Orphan', sbt_tier_level: 1 }));
    expect(err.message).toBe('Tier already exists');
  });

  it("concurrent creations of one name: exactly one tier, every other refused 'Tier already exists'", async () => {
    const results = await Promise.allSettled(
      Array.from({ length: 6 }, (_, i) => createTierService(ctx(), { sbt_name: 'racer', sbt_display_name: `Racer ${i}`, sbt_tier_level: i })),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const refusals = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(refusals.map((r) => (r.reason as Error).message)).toEqual(Array(5).fill('Tier already exists'));
    expect(await findGroups(t.services.db, { group_name: 'racer', category: 'subscription_tier' })).toHaveLength(1);
  });

  it('allows the name of a deleted tier group, and of a group of another category', async () => {
    await t.services.db.insertInto('grp_groups').values({ grp_name: 'reborn', grp_category: 'subscription_tier', grp_delete_time: t.clock.now() }).execute();
    await t.services.db.insertInto('grp_groups').values({ grp_name: 'reborn', grp_category: 'club' }).execute();
    const tier = await createTier(t, { name: 'reborn', level: 3 });
    expect(tier.tierId).toBeGreaterThan(0);
  });

  it('refuses sbt_features naming each bad key, and creates nothing', async () => {
    const before = await countRows();
    const err = await refusal(
      createTierService(ctx(), {
        sbt_name: 'badfeatures',
        sbt_display_name: 'Bad',
        sbt_tier_level: 1,
        sbt_features: JSON.stringify({ drive_storage_bytes: -1, drive_share_links: 'yes', nope: 1, mailbox_fleet_slot: true }),
      }),
    );
    expect(err.fields).toEqual({
      'sbt_features.drive_storage_bytes': 'must be at least 0',
      'sbt_features.drive_share_links': 'must be a boolean',
      'sbt_features.nope': 'is not a declared feature',
    });
    expect(err.message).toBe('Invalid tier features: drive_storage_bytes must be at least 0; drive_share_links must be a boolean; nope is not a declared feature');
    expect(await countRows()).toEqual(before);
  });

  it('refuses a missing name, display name or non-integer level', async () => {
    expect((await refusal(createTierService(ctx(), { sbt_display_name: 'X', sbt_tier_level: 1 }))).fields).toEqual({ sbt_name: 'is required' });
    expect((await refusal(createTierService(ctx(), { sbt_name: 'x1', sbt_tier_level: 1 }))).fields).toEqual({ sbt_display_name: 'is required' });
    expect((await refusal(createTierService(ctx(), { sbt_name: 'x1', sbt_display_name: 'X', sbt_tier_level: 1.5 }))).fields).toEqual({ sbt_tier_level: 'must be an integer' });
  });
});

describe('tier rename and update', () => {
  it('renaming a tier renames its group', async () => {
    const tier = await createTier(t, { name: 'bronze', level: 5 });
    t.clock.advanceSeconds(60);
    const updated = await updateTier(t.services.db, t.clock, t.services.tiers.registry, tier.tierId, { sbt_name: 'copper' });
    expect(updated.sbt_name).toBe('copper');
    const group = await t.services.db.selectFrom('grp_groups').selectAll().where('grp_group_id', '=', tier.groupId).executeTakeFirstOrThrow();
    expect(group.grp_name).toBe('copper');
    expect(group.grp_update_time).toEqual(t.clock.now());
  });

  it("refuses a rename onto another tier's name with 'Tier already exists', leaving both as they were", async () => {
    const a = await createTier(t, { name: 'alpha', level: 1 });
    await createTier(t, { name: 'beta', level: 2 });
    const err = await refusal(updateTier(t.services.db, t.clock, t.services.tiers.registry, a.tierId, { sbt_name: 'beta' }));
    expect(err.message).toBe('Tier already exists');
    const group = await t.services.db.selectFrom('grp_groups').select('grp_name').where('grp_group_id', '=', a.groupId).executeTakeFirstOrThrow();
    expect(group.grp_name).toBe('alpha');
  });

  it('validates sbt_features on update, reporting each bad key', async () => {
    const tier = await createTier(t, { name: 'gamma', level: 7 });
    const err = await refusal(
      updateTier(t.services.db, t.clock, t.services.tiers.registry, tier.tierId, { sbt_features: { drive_versioning_depth: 1001, mailbox_fleet_max_domains: 2.5 } as never }),
    );
    expect(err.fields).toEqual({ 'sbt_features.drive_versioning_depth': 'must be at most 1000', 'sbt_features.mailbox_fleet_max_domains': 'must be an integer' });
    const ok = await updateTier(t.services.db, t.clock, t.services.tiers.registry, tier.tierId, { sbt_features: { drive_versioning_depth: 1000 } });
    expect(ok.sbt_features).toEqual({ drive_versioning_depth: 1000 });
  });
});

describe('group lookups', () => {
  it('accept the contract option keys group_name, category, group_id, user_id and deleted', async () => {
    const { userId } = await t.createUser();
    const live = await t.services.db
      .insertInto('grp_groups')
      .values({ grp_name: 'lookup', grp_category: 'club', grp_usr_user_id_created: userId })
      .returning('grp_group_id')
      .executeTakeFirstOrThrow();
    const gone = await t.services.db
      .insertInto('grp_groups')
      .values({ grp_name: 'lookup', grp_category: 'club', grp_delete_time: t.clock.now() })
      .returning('grp_group_id')
      .executeTakeFirstOrThrow();
    const ids = (gs: Array<{ grp_group_id: number }>) => gs.map((g) => g.grp_group_id);
    expect(ids(await findGroups(t.services.db, { group_name: 'lookup' }))).toEqual([live.grp_group_id, gone.grp_group_id]);
    expect(ids(await findGroups(t.services.db, { group_name: 'lookup', deleted: false }))).toEqual([live.grp_group_id]);
    expect(ids(await findGroups(t.services.db, { group_name: 'lookup', deleted: true }))).toEqual([gone.grp_group_id]);
    expect(ids(await findGroups(t.services.db, { group_id: gone.grp_group_id }))).toEqual([gone.grp_group_id]);
    expect(ids(await findGroups(t.services.db, { user_id: userId }))).toEqual([live.grp_group_id]);
    const tierGroups = await findGroups(t.services.db, { category: 'subscription_tier', deleted: false });
    expect(tierGroups.length).toBeGreaterThan(0);
    expect(tierGroups.every((g) => g.grp_category === 'subscription_tier' && g.grp_delete_time === null)).toBe(true);
    await expect(findGroups(t.services.db, { colour: 'red' } as never)).rejects.toThrow("Unknown group query option 'colour'");
  });
});

describe('feature definitions at start', () => {
  it('refuses to start with a message naming the file and the key when a definition is invalid', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'gh-plugins-'));
    try {
      mkdirSync(path.join(dir, 'gadgets'));
      const file = path.join(dir, 'gadgets', 'tier_features.json');
      writeFileSync(file, JSON.stringify({ slots: { type: 'integer', label: 'Slots', description: 'D', default: 5, min: 10 } }));
      const start = createServices({ config: loadConfig({}), database: t.database, clock: t.clock, pluginsDir: dir });
      await expect(start).rejects.toThrow(FeatureDefinitionError);
      await expect(start).rejects.toThrow(`${file}: feature 'slots': default (5) is below min (10)`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
