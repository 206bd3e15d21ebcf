import { sql, type Kysely } from 'kysely';
import type { DB } from '../../db/types.js';
import type { MemberRow, RowError } from './columns.js';

/** A live, active tier as the import names it: by its name or its display name. */
export interface TierChoice {
  tierId: number;
  name: string;
  displayName: string;
  level: number;
}

/** The tiers a file may name, read once per import. */
export class TierCatalogue {
  private constructor(
    private readonly byKey: Map<string, TierChoice>,
    /** Where a complimentary member without a named tier goes: the lowest tier a product sells. */
    readonly lowestPaid: TierChoice | null,
  ) {}

  static async load(db: Kysely<DB>): Promise<TierCatalogue> {
    const tiers = await db
      .selectFrom('sbt_subscription_tiers')
      .select(['sbt_subscription_tier_id', 'sbt_name', 'sbt_display_name', 'sbt_tier_level'])
      .where('sbt_delete_time', 'is', null)
      .where('sbt_is_active', '=', true)
      .orderBy('sbt_tier_level')
      .orderBy('sbt_subscription_tier_id')
      .execute();
    const choices = tiers.map((t) => ({ tierId: Number(t.sbt_subscription_tier_id), name: t.sbt_name, displayName: t.sbt_display_name, level: t.sbt_tier_level }));
    const byKey = new Map<string, TierChoice>();
    // A name wins over another tier's display name; among display names the lower tier wins.
    for (const c of choices) if (!byKey.has(c.displayName.toLowerCase())) byKey.set(c.displayName.toLowerCase(), c);
    for (const c of choices) byKey.set(c.name.toLowerCase(), c);
    // pro_products belongs to the product model's migration; its tier link is read by plain SQL.
    const sold = await sql<{ tier_id: number }>`
      select distinct pro_sbt_subscription_tier_id as tier_id from pro_products
      where pro_sbt_subscription_tier_id is not null and pro_delete_time is null`.execute(db);
    const soldIds = new Set(sold.rows.map((r) => Number(r.tier_id)));
    return new TierCatalogue(byKey, choices.find((c) => soldIds.has(c.tierId)) ?? null);
  }

  find(nameOrDisplayName: string): TierChoice | undefined {
    return this.byKey.get(nameOrDisplayName.trim().toLowerCase());
  }
}

/** A user the file names, as it stands now. */
export interface ExistingMember {
  userId: number;
  email: string;
  firstName: string;
  lastName: string | null;
  contactPreferences: string | null;
  stripeCustomerId: string | null;
  permission: number;
  tierId: number | null;
}

/** The live users of these addresses, by lower-cased address. */
export async function existingMembers(db: Kysely<DB>, emails: string[]): Promise<Map<string, ExistingMember>> {
  const out = new Map<string, ExistingMember>();
  if (emails.length === 0) return out;
  const rows = await db
    .selectFrom('usr_users')
    .leftJoin('grm_group_members', (j) => j.onRef('grm_foreign_key_id', '=', 'usr_user_id').on('grm_sbt_subscription_tier_id', 'is not', null))
    .select([
      'usr_user_id',
      'usr_email',
      'usr_first_name',
      'usr_last_name',
      'usr_contact_preferences',
      'usr_stripe_customer_id',
      'usr_permission',
      'grm_sbt_subscription_tier_id',
      'grm_group_member_id',
    ])
    .where(sql<string>`lower(usr_email)`, 'in', emails.map((e) => e.toLowerCase()))
    .where('usr_delete_time', 'is', null)
    .orderBy('grm_group_member_id')
    .execute();
  for (const r of rows) {
    const key = r.usr_email.toLowerCase();
    // The first tier membership is the current one (as the membership service reads it).
    if (out.has(key)) continue;
    out.set(key, {
      userId: Number(r.usr_user_id),
      email: r.usr_email,
      firstName: r.usr_first_name,
      lastName: r.usr_last_name,
      contactPreferences: r.usr_contact_preferences,
      stripeCustomerId: r.usr_stripe_customer_id,
      permission: r.usr_permission,
      tierId: r.grm_sbt_subscription_tier_id === null ? null : Number(r.grm_sbt_subscription_tier_id),
    });
  }
  return out;
}

export type Outcome = 'create' | 'update' | 'unchanged' | 'error';
export type Change = 'name' | 'subscribed_to_emails' | 'stripe_customer_id' | 'tier';

/** What one row will do (or why it will not). */
export type PlannedRow =
  | { outcome: 'error'; line: number; email: string; error: RowError }
  | { outcome: 'create' | 'update' | 'unchanged'; line: number; email: string; row: MemberRow; existing: ExistingMember | null; changes: Change[]; tier: TierChoice | null };

/** Who runs the import: a staff member changes no one with more permission (null: the operator's CLI). */
export interface ImportActor {
  usr_user_id: number;
  usr_permission: number;
}

const hasEmailChannel = (prefs: string | null) => (prefs ?? '').split(',').includes('email');

/** The contact preferences with the email channel added or taken away. */
export function withEmailChannel(prefs: string | null, subscribed: boolean): string | null {
  const channels = (prefs ?? '').split(',').filter((c) => c !== '' && c !== 'email');
  if (subscribed) channels.unshift('email');
  return channels.length === 0 ? null : channels.join(',');
}

/** The tier a row asks for: the highest it names, else for a complimentary member the lowest paid one. */
function chooseTier(row: MemberRow, tiers: TierCatalogue): { tier: TierChoice | null } | { error: RowError } {
  let best: TierChoice | null = null;
  for (const name of row.tiers) {
    const t = tiers.find(name);
    if (!t) return { error: { reason: 'unknown_tier', message: `No active tier is named '${name.slice(0, 80)}'` } };
    if (!best || t.level > best.level) best = t;
  }
  if (best || !row.complimentary) return { tier: best };
  if (!tiers.lowestPaid) return { error: { reason: 'no_paid_tier', message: 'complimentary_plan is true but the row names no tier and no tier is sold' } };
  return { tier: tiers.lowestPaid };
}

/** Plans one row against what exists: create, update (naming what changes), unchanged, or an error. */
export function planRow(row: MemberRow, existing: ExistingMember | undefined, tiers: TierCatalogue, actor: ImportActor | null): PlannedRow {
  const base = { line: row.line, email: row.email };
  const chosen = chooseTier(row, tiers);
  if ('error' in chosen) return { ...base, outcome: 'error', error: chosen.error };
  const tier = chosen.tier;
  if (!existing) {
    const changes: Change[] = ['name'];
    if (row.subscribedToEmails !== null) changes.push('subscribed_to_emails');
    if (row.stripeCustomerId) changes.push('stripe_customer_id');
    if (tier) changes.push('tier');
    return { ...base, outcome: 'create', row, existing: null, changes, tier };
  }
  if (actor && actor.usr_user_id !== existing.userId && existing.permission > actor.usr_permission) {
    return { ...base, outcome: 'error', error: { reason: 'not_permitted', message: 'The account has more permission than yours' } };
  }
  const changes: Change[] = [];
  if (row.firstName !== null && (row.firstName !== existing.firstName || (row.lastName ?? null) !== (existing.lastName ?? null))) changes.push('name');
  if (row.subscribedToEmails !== null && row.subscribedToEmails !== hasEmailChannel(existing.contactPreferences)) changes.push('subscribed_to_emails');
  if (row.stripeCustomerId !== null && row.stripeCustomerId !== existing.stripeCustomerId) changes.push('stripe_customer_id');
  if (tier && tier.tierId !== existing.tierId) changes.push('tier');
  return { ...base, outcome: changes.length === 0 ? 'unchanged' : 'update', row, existing, changes, tier };
}
