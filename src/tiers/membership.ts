import { sql, type Kysely } from 'kysely';
import type { AssignmentMethod, DB, MembershipSubscriptionStatus } from '../db/types.js';
import type { Clock } from '../lib/clock.js';
import { recordTierChange, recordTierChanges, type ChangeReference, type TierChange, type TierChangeReason } from './change-tracking.js';
import { TierInputError } from './errors.js';
import { recordTierGranted, recordTierRemoved, tierHow } from './tier-events.js';
import { inTransaction } from './transaction.js';

/** The four billing sources of the contract; all use the one grant path and the one removal path. */
export type BillingSource = 'card_processor' | 'wallet_provider' | 'ios_store' | 'android_store';
export const BILLING_SOURCES: readonly BillingSource[] = ['card_processor', 'wallet_provider', 'ios_store', 'android_store'];

/** recovery: a subscription back to active after a billing issue or a pause (DESIGN 14). */
export type GrantEvent = 'purchase' | 'renewal' | 'recovery';
/** on_hold and paused: the provider stopped the subscription's access, recoverably (DESIGN 14). */
export type RemovalReason = 'expiry' | 'cancellation' | 'refund' | 'on_hold' | 'paused';
const REMOVAL_REASONS: readonly RemovalReason[] = ['expiry', 'cancellation', 'refund', 'on_hold', 'paused'];

/** A product as the grant path needs it: its id and its tier link (pro_sbt_subscription_tier_id). */
export interface TierProduct {
  productId: number;
  tierId: number | null;
}

/** What the grant path did: a closed set. */
export type GrantOutcome =
  | { outcome: 'no_tier_link' }
  | { outcome: 'joined'; tierId: number }
  | { outcome: 'moved'; fromTierId: number; tierId: number }
  | { outcome: 'renewed'; tierId: number }
  | { outcome: 'skipped_lower_level'; keptTierId: number; tierId: number }
  | { outcome: 'skipped_tier_unavailable'; tierId: number };

interface TierRow {
  sbt_subscription_tier_id: number;
  sbt_grp_group_id: number;
  sbt_name: string;
  sbt_tier_level: number;
  sbt_is_active: boolean;
  sbt_delete_time: Date | null;
}

interface CurrentMembership extends TierRow {
  grm_group_member_id: number;
}

const isLive = (t: TierRow) => t.sbt_delete_time === null && t.sbt_is_active;

/**
 * Tier membership changes. Each method runs in one transaction: its own, or the caller's when the
 * service is bound to one with within(trx) (e.g. a webhook recording its order item in the same
 * transaction). On the embedded database a caller holding a transaction must bind it, since the single
 * connection is held until commit.
 */
export class TierMembershipService {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly clock: Clock,
    /** Added to the metadata of every grant and removal row it records (e.g. how: 'reconcile'). */
    private readonly note: Readonly<Record<string, unknown>> = {},
  ) {}

  /** The same service, working inside the caller's transaction. */
  within(trx: Kysely<DB>): TierMembershipService {
    return new TierMembershipService(trx, this.clock, this.note);
  }

  /** The same service, whose grant and removal rows also carry `note` in their metadata. */
  noting(note: Record<string, unknown>): TierMembershipService {
    return new TierMembershipService(this.db, this.clock, { ...this.note, ...note });
  }

  /**
   * The one grant path, for purchases and renewals from every billing source. Per the membership table:
   * no tier: join the product's tier; member of A and B's level >= A's: leave A, join B; B lower: A is
   * kept and the grant is skipped (purchase is upgrade-only), and the skip is recorded too. A membership
   * in a deleted or inactive tier counts as no tier. Serialised per user by a lock on the user row.
   */
  async grantTierFromPurchase(
    userId: number,
    product: TierProduct | number,
    source: BillingSource,
    reference: ChangeReference | null,
    opts: { event?: GrantEvent } = {},
  ): Promise<GrantOutcome> {
    if (!BILLING_SOURCES.includes(source)) throw new TierInputError(`Unknown billing source '${source}'`, { source: 'unknown billing source' });
    const event = opts.event ?? 'purchase';
    return inTransaction(this.db, async (trx) => {
      const p = typeof product === 'number' ? await this.readProduct(trx, product) : product;
      if (p.tierId === null) return { outcome: 'no_tier_link' };
      await this.lockUser(trx, userId);
      const now = this.clock.now();
      const current = await this.currentMembership(trx, userId);
      const target = await this.readTier(trx, p.tierId);
      const base = { userId, reference, changedBy: null, at: now };
      const meta = (extra: Record<string, unknown>) => ({ source, event, product_id: p.productId, ...extra, ...this.note });

      if (!target || !isLive(target)) {
        await recordTierChange(trx, {
          ...base,
          tierId: p.tierId,
          oldTierId: current?.sbt_subscription_tier_id ?? null,
          newTierId: current?.sbt_subscription_tier_id ?? null,
          reason: `${event}_skipped_tier_unavailable`,
          metadata: meta({ requested_tier: target?.sbt_name ?? null }),
        });
        return { outcome: 'skipped_tier_unavailable', tierId: p.tierId };
      }

      if (current && current.sbt_subscription_tier_id === target.sbt_subscription_tier_id) {
        await trx
          .updateTable('grm_group_members')
          .set({ grm_assignment_method: 'purchase', grm_subscription_status: 'active' })
          .where('grm_group_member_id', '=', current.grm_group_member_id)
          .execute();
        await recordTierChange(trx, {
          ...base,
          tierId: target.sbt_subscription_tier_id,
          oldTierId: target.sbt_subscription_tier_id,
          newTierId: target.sbt_subscription_tier_id,
          reason: event,
          metadata: meta({ old_tier: target.sbt_name, new_tier: target.sbt_name, old_level: target.sbt_tier_level, new_level: target.sbt_tier_level }),
        });
        return { outcome: 'renewed', tierId: target.sbt_subscription_tier_id };
      }

      if (current && isLive(current) && target.sbt_tier_level < current.sbt_tier_level) {
        await recordTierChange(trx, {
          ...base,
          tierId: target.sbt_subscription_tier_id,
          oldTierId: current.sbt_subscription_tier_id,
          newTierId: current.sbt_subscription_tier_id,
          reason: `${event}_skipped_lower_level`,
          metadata: meta({
            old_tier: current.sbt_name,
            new_tier: current.sbt_name,
            requested_tier: target.sbt_name,
            old_level: current.sbt_tier_level,
            requested_level: target.sbt_tier_level,
          }),
        });
        return { outcome: 'skipped_lower_level', keptTierId: current.sbt_subscription_tier_id, tierId: target.sbt_subscription_tier_id };
      }

      if (current) await this.leave(trx, current);
      await this.join(trx, userId, target, 'purchase', now);
      await recordTierChange(trx, {
        ...base,
        tierId: target.sbt_subscription_tier_id,
        oldTierId: current?.sbt_subscription_tier_id ?? null,
        newTierId: target.sbt_subscription_tier_id,
        reason: event,
        metadata: meta({
          old_tier: current?.sbt_name ?? null,
          new_tier: target.sbt_name,
          old_level: current?.sbt_tier_level ?? null,
          new_level: target.sbt_tier_level,
        }),
      });
      await recordTierGranted(trx, this.clock, { userId, tier: target, previous: current, how: tierHow(this.note, 'purchase'), source, productId: p.productId, reference });
      return current
        ? { outcome: 'moved', fromTierId: current.sbt_subscription_tier_id, tierId: target.sbt_subscription_tier_id }
        : { outcome: 'joined', tierId: target.sbt_subscription_tier_id };
    });
  }

  /**
   * The one removal path, for expiry, cancellation, refund, account hold and pause from every billing source: the user leaves
   * every tier group (and no other group). Returns the tiers left; one change row per tier left, naming
   * the billing source when given.
   */
  async removeFromAllTiers(
    userId: number,
    reason: RemovalReason,
    reference: ChangeReference | null,
    opts: { source?: BillingSource } = {},
  ): Promise<{ removedTierIds: number[] }> {
    if (!REMOVAL_REASONS.includes(reason)) throw new TierInputError(`Unknown removal reason '${reason}'`, { reason: 'unknown' });
    return inTransaction(this.db, async (trx) => {
      await this.lockUser(trx, userId);
      const now = this.clock.now();
      const memberships = await this.tierMemberships(trx, userId);
      for (const m of memberships) {
        await this.leave(trx, m);
        await recordTierChange(trx, {
          userId,
          reference,
          changedBy: null,
          at: now,
          tierId: m.sbt_subscription_tier_id,
          oldTierId: m.sbt_subscription_tier_id,
          newTierId: null,
          reason,
          metadata: { ...(opts.source ? { source: opts.source } : {}), event: reason, old_tier: m.sbt_name, new_tier: null, old_level: m.sbt_tier_level, new_level: null, ...this.note },
        });
        await recordTierRemoved(trx, this.clock, { userId, tier: m, cause: reason, how: tierHow(this.note, 'purchase'), source: opts.source ?? null, reference });
      }
      return { removedTierIds: memberships.map((m) => m.sbt_subscription_tier_id) };
    });
  }

  /**
   * An administrator puts the user in the chosen tier (any level) or in none. Always recorded as a
   * manual assignment, even when nothing changes, because it is an explicit act.
   */
  async assignManually(userId: number, tierId: number | null, adminUserId: number | null): Promise<{ tierId: number | null; previousTierId: number | null }> {
    return inTransaction(this.db, async (trx) => {
      await this.lockUser(trx, userId);
      const now = this.clock.now();
      const current = await this.currentMembership(trx, userId);
      const target = tierId === null ? null : ((await this.readTier(trx, tierId)) ?? null);
      if (tierId !== null && (target === null || target.sbt_delete_time !== null)) throw new TierInputError(`No tier with id ${tierId}`, { tier: 'not found' });
      if (target && !target.sbt_is_active) throw new TierInputError(`Tier ${target.sbt_name} is not active`, { tier: 'is not active' });
      const same = current !== undefined && target !== null && current.sbt_subscription_tier_id === target.sbt_subscription_tier_id;
      if (same) {
        await trx
          .updateTable('grm_group_members')
          .set({ grm_assignment_method: 'manual', grm_subscription_status: 'active' })
          .where('grm_group_member_id', '=', current.grm_group_member_id)
          .execute();
      } else {
        if (current) await this.leave(trx, current);
        if (target) await this.join(trx, userId, target, 'manual', now);
      }
      await recordTierChange(trx, {
        userId,
        reference: null,
        changedBy: adminUserId,
        at: now,
        tierId: target?.sbt_subscription_tier_id ?? current?.sbt_subscription_tier_id ?? null,
        oldTierId: current?.sbt_subscription_tier_id ?? null,
        newTierId: target?.sbt_subscription_tier_id ?? null,
        reason: 'manual',
        metadata: {
          old_tier: current?.sbt_name ?? null,
          new_tier: target?.sbt_name ?? null,
          old_level: current?.sbt_tier_level ?? null,
          new_level: target?.sbt_tier_level ?? null,
          ...this.note,
        },
      });
      const how = tierHow(this.note, 'manual');
      if (!same && target) await recordTierGranted(trx, this.clock, { userId, tier: target, previous: current, how, source: null, productId: null, reference: null });
      if (!same && !target && current) await recordTierRemoved(trx, this.clock, { userId, tier: current, cause: 'manual', how, source: null, reference: null });
      return { tierId: target?.sbt_subscription_tier_id ?? null, previousTierId: current?.sbt_subscription_tier_id ?? null };
    });
  }

  /**
   * assignManually for many users at once (an import's batch): each user ends in the chosen tier, recorded
   * as a manual assignment, exactly as one assignManually per user would leave it, in a few statements
   * instead of five per user. The users are distinct; a tier that is deleted or inactive refuses them all.
   */
  async assignManuallyMany(assignments: ReadonlyArray<{ userId: number; tierId: number }>, adminUserId: number | null): Promise<void> {
    if (assignments.length === 0) return;
    await inTransaction(this.db, async (trx) => {
      const userIds = [...new Set(assignments.map((a) => a.userId))];
      if (userIds.length !== assignments.length) throw new TierInputError('Each user may be assigned once', { user_id: 'repeated' });
      // In user id order, as one lockUser after another would take them.
      const locked = await trx.selectFrom('usr_users').select('usr_user_id').where('usr_user_id', 'in', userIds).orderBy('usr_user_id').forUpdate().execute();
      if (locked.length !== userIds.length) throw new TierInputError('No such user', { user_id: 'not found' });
      const now = this.clock.now();
      const tiers = new Map<number, TierRow>();
      for (const t of await trx
        .selectFrom('sbt_subscription_tiers')
        .select(['sbt_subscription_tier_id', 'sbt_grp_group_id', 'sbt_name', 'sbt_tier_level', 'sbt_is_active', 'sbt_delete_time'])
        .where('sbt_subscription_tier_id', 'in', [...new Set(assignments.map((a) => a.tierId))])
        .forShare()
        .execute()) {
        tiers.set(t.sbt_subscription_tier_id, t);
      }
      for (const a of assignments) {
        const t = tiers.get(a.tierId);
        if (!t || t.sbt_delete_time !== null) throw new TierInputError(`No tier with id ${a.tierId}`, { tier: 'not found' });
        if (!t.sbt_is_active) throw new TierInputError(`Tier ${t.sbt_name} is not active`, { tier: 'is not active' });
      }
      const current = new Map<number, CurrentMembership>();
      for (const m of await trx
        .selectFrom('grm_group_members')
        .innerJoin('sbt_subscription_tiers', 'sbt_subscription_tier_id', 'grm_sbt_subscription_tier_id')
        .select(['grm_group_member_id', 'grm_foreign_key_id', 'sbt_subscription_tier_id', 'sbt_grp_group_id', 'sbt_name', 'sbt_tier_level', 'sbt_is_active', 'sbt_delete_time'])
        .where('grm_foreign_key_id', 'in', userIds)
        .where('grm_sbt_subscription_tier_id', 'is not', null)
        .orderBy('grm_group_member_id')
        .execute()) {
        if (!current.has(Number(m.grm_foreign_key_id))) current.set(Number(m.grm_foreign_key_id), m);
      }
      const same: number[] = [];
      const leaving: number[] = [];
      const joins: Array<{ userId: number; tier: TierRow }> = [];
      const changes: TierChange[] = [];
      for (const a of assignments) {
        const target = tiers.get(a.tierId)!;
        const from = current.get(a.userId);
        if (from && from.sbt_subscription_tier_id === target.sbt_subscription_tier_id) same.push(from.grm_group_member_id);
        else {
          if (from) leaving.push(from.grm_group_member_id);
          joins.push({ userId: a.userId, tier: target });
        }
        changes.push({
          userId: a.userId,
          reference: null,
          changedBy: adminUserId,
          at: now,
          tierId: target.sbt_subscription_tier_id,
          oldTierId: from?.sbt_subscription_tier_id ?? null,
          newTierId: target.sbt_subscription_tier_id,
          reason: 'manual',
          metadata: { old_tier: from?.sbt_name ?? null, new_tier: target.sbt_name, old_level: from?.sbt_tier_level ?? null, new_level: target.sbt_tier_level, ...this.note },
        });
      }
      if (same.length > 0) await trx.updateTable('grm_group_members').set({ grm_assignment_method: 'manual', grm_subscription_status: 'active' }).where('grm_group_member_id', 'in', same).execute();
      if (leaving.length > 0) await trx.deleteFrom('grm_group_members').where('grm_group_member_id', 'in', leaving).where('grm_sbt_subscription_tier_id', 'is not', null).execute();
      if (joins.length > 0) {
        await trx
          .insertInto('grm_group_members')
          .values(
            joins.map((j) => ({
              grm_grp_group_id: j.tier.sbt_grp_group_id,
              grm_foreign_key_id: j.userId,
              grm_create_time: now,
              grm_assigned_time: now,
              grm_assignment_method: 'manual' as const,
              grm_subscription_status: 'active' as const,
              grm_sbt_subscription_tier_id: j.tier.sbt_subscription_tier_id,
            })),
          )
          .execute();
      }
      await recordTierChanges(trx, changes);
      // One tier.granted per member whose tier changed, as assignManually writes for one.
      const how = tierHow(this.note, 'manual');
      for (const j of joins) {
        await recordTierGranted(trx, this.clock, { userId: j.userId, tier: j.tier, previous: current.get(j.userId) ?? null, how, source: null, productId: null, reference: null });
      }
    });
  }

  /** Billing reports the subscription's state (e.g. cancelled at period end) while the membership lasts. */
  async setSubscriptionStatus(userId: number, status: MembershipSubscriptionStatus): Promise<boolean> {
    const res = await this.db
      .updateTable('grm_group_members')
      .set({ grm_subscription_status: status })
      .where('grm_foreign_key_id', '=', userId)
      .where('grm_sbt_subscription_tier_id', 'is not', null)
      .executeTakeFirst();
    return Number(res.numUpdatedRows) > 0;
  }

  /**
   * A member's own plan change (the subscription lifecycle): the user moves from their current tier to
   * the product's tier, up or down as `direction` says, recorded with that reason. Unlike a purchase, a
   * downgrade does lower the level; a direction that does not match the levels is refused, as is a tier
   * that is deleted or inactive.
   */
  async changeSubscribedTier(
    userId: number,
    product: TierProduct | number,
    source: BillingSource,
    direction: 'upgrade' | 'downgrade',
    reference: ChangeReference | null,
  ): Promise<{ fromTierId: number | null; tierId: number }> {
    if (!BILLING_SOURCES.includes(source)) throw new TierInputError(`Unknown billing source '${source}'`, { source: 'unknown billing source' });
    return inTransaction(this.db, async (trx) => {
      const p = typeof product === 'number' ? await this.readProduct(trx, product) : product;
      if (p.tierId === null) throw new TierInputError(`Product ${p.productId} has no tier link`, { product_id: 'has no tier link' });
      await this.lockUser(trx, userId);
      const now = this.clock.now();
      const current = await this.currentMembership(trx, userId);
      const target = await this.readTier(trx, p.tierId);
      if (!target || !isLive(target)) throw new TierInputError(`Tier ${p.tierId} is not available`, { tier: 'is not available' });
      const from = current && isLive(current) ? current : undefined;
      const fits = direction === 'upgrade' ? !from || target.sbt_tier_level > from.sbt_tier_level : !!from && target.sbt_tier_level < from.sbt_tier_level;
      if (!fits) throw new TierInputError(`Moving to ${target.sbt_name} is not a ${direction}`, { tier: `is not a ${direction}` });
      if (current) await this.leave(trx, current);
      await this.join(trx, userId, target, 'purchase', now);
      await recordTierChange(trx, {
        userId,
        reference,
        changedBy: null,
        at: now,
        tierId: target.sbt_subscription_tier_id,
        oldTierId: current?.sbt_subscription_tier_id ?? null,
        newTierId: target.sbt_subscription_tier_id,
        reason: direction,
        metadata: {
          source,
          event: direction,
          product_id: p.productId,
          old_tier: current?.sbt_name ?? null,
          new_tier: target.sbt_name,
          old_level: current?.sbt_tier_level ?? null,
          new_level: target.sbt_tier_level,
        },
      });
      await recordTierGranted(trx, this.clock, { userId, tier: target, previous: current, how: tierHow(this.note, 'purchase'), source, productId: p.productId, reference });
      return { fromTierId: current?.sbt_subscription_tier_id ?? null, tierId: target.sbt_subscription_tier_id };
    });
  }

  // Locking the user row serialises every tier change for that user: a second grant waits here and then
  // sees the first one's result. The partial unique index stays the last word if anything bypasses this.
  private async lockUser(trx: Kysely<DB>, userId: number): Promise<void> {
    const row = await trx.selectFrom('usr_users').select('usr_user_id').where('usr_user_id', '=', userId).forUpdate().executeTakeFirst();
    if (!row) throw new TierInputError(`No user with id ${userId}`, { user_id: 'not found' });
  }

  private async readProduct(trx: Kysely<DB>, productId: number): Promise<TierProduct> {
    // pro_products belongs to the product model's migration; read its tier link by plain SQL.
    const res = await sql<{ pro_sbt_subscription_tier_id: number | null }>`
      select pro_sbt_subscription_tier_id from pro_products where pro_product_id = ${productId}`.execute(trx);
    const row = res.rows[0];
    if (!row) throw new TierInputError(`No product with id ${productId}`, { product_id: 'not found' });
    return { productId, tierId: row.pro_sbt_subscription_tier_id === null ? null : Number(row.pro_sbt_subscription_tier_id) };
  }

  private async readTier(trx: Kysely<DB>, tierId: number): Promise<TierRow | undefined> {
    return trx
      .selectFrom('sbt_subscription_tiers')
      .select(['sbt_subscription_tier_id', 'sbt_grp_group_id', 'sbt_name', 'sbt_tier_level', 'sbt_is_active', 'sbt_delete_time'])
      .where('sbt_subscription_tier_id', '=', tierId)
      .forShare()
      .executeTakeFirst();
  }

  private tierMemberships(trx: Kysely<DB>, userId: number): Promise<CurrentMembership[]> {
    return trx
      .selectFrom('grm_group_members')
      .innerJoin('sbt_subscription_tiers', 'sbt_subscription_tier_id', 'grm_sbt_subscription_tier_id')
      .select([
        'grm_group_member_id',
        'sbt_subscription_tier_id',
        'sbt_grp_group_id',
        'sbt_name',
        'sbt_tier_level',
        'sbt_is_active',
        'sbt_delete_time',
      ])
      .where('grm_foreign_key_id', '=', userId)
      .where('grm_sbt_subscription_tier_id', 'is not', null)
      .orderBy('grm_group_member_id')
      .execute();
  }

  private async currentMembership(trx: Kysely<DB>, userId: number): Promise<CurrentMembership | undefined> {
    return (await this.tierMemberships(trx, userId))[0];
  }

  private async leave(trx: Kysely<DB>, m: CurrentMembership): Promise<void> {
    // Only ever a tier membership row: the row carries the tier id, so other groups are untouched.
    await trx
      .deleteFrom('grm_group_members')
      .where('grm_group_member_id', '=', m.grm_group_member_id)
      .where('grm_sbt_subscription_tier_id', 'is not', null)
      .execute();
  }

  private async join(trx: Kysely<DB>, userId: number, tier: TierRow, method: AssignmentMethod, now: Date): Promise<void> {
    await trx
      .insertInto('grm_group_members')
      .values({
        grm_grp_group_id: tier.sbt_grp_group_id,
        grm_foreign_key_id: userId,
        grm_create_time: now,
        grm_assigned_time: now,
        grm_assignment_method: method,
        grm_subscription_status: 'active',
        grm_sbt_subscription_tier_id: tier.sbt_subscription_tier_id,
      })
      .execute();
  }
}
