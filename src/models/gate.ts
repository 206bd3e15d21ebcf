import { sql, type ExpressionBuilder, type Kysely, type RawBuilder } from 'kysely';
import type { DB } from '../db/types.js';
import type { Clock } from '../lib/clock.js';
import type { ReadCache } from '../cache/read-cache.js';
import type { Settings } from '../settings/store.js';
import { storeActive } from '../settings/store-active.js';
import { fetchUserTier, type UserTier, type UserTierCache } from '../tiers/features.js';
import { STAFF_PERMISSION, decideTierAccess, gatePreview, type EntityGate, type TierAccessResult, type TierCatalogue } from '../tiers/gating.js';

type Row = Record<string, unknown>;

/** The read caches the gate's two reads use (a model context's caches satisfy it). */
export interface GateCaches {
  /** The tier catalogue's two reads: the live tiers ('tiers') and the products linked to one ('products'). */
  catalogue: ReadCache<'tiers' | 'products', Row[]>;
  /** Users' tiers (the viewer's level). */
  userTiers: UserTierCache;
}

/**
 * Which columns of a gatable model hold its tier gate, and which body columns the preview replaces (a
 * model declaration's `gate`).
 */
export interface GateColumns {
  minLevel: string;
  publicAfterHours?: string;
  publishedTime?: string;
  body?: readonly string[];
}

/** What the gate reads of a model (a Model satisfies it). */
export interface GatableModel {
  prefix: string;
  gate?: GateColumns;
}

/** What the gate reads of a model hook's context (a ModelContext satisfies it). */
export interface GateContext {
  db: Kysely<DB>;
  clock: Clock;
  settings: Settings;
  viewer: { current_user_id: number | null; current_user_permission: number };
  tierGate?: TierGate;
  caches?: GateCaches;
}

export interface GateViewerIdentity {
  userId: number | null;
  permission: number;
}

function asDate(v: unknown): Date | null {
  return v instanceof Date ? v : typeof v === 'string' ? new Date(v.replace(' ', 'T') + 'Z') : null;
}

function asInt(v: unknown): number | null {
  return v === null || v === undefined ? null : Number(v);
}

/** The gate of one row of a gatable model. */
export function entityGate(model: GatableModel, row: Row): EntityGate {
  const g = model.gate!;
  return {
    minLevel: asInt(row[g.minLevel]),
    publicAfterHours: g.publicAfterHours ? asInt(row[g.publicAfterHours]) : null,
    publishedAt: g.publishedTime ? asDate(row[g.publishedTime]) : null,
    createdAt: asDate(row[`${model.prefix}_create_time`]),
  };
}

const NO_CATALOGUE: TierCatalogue = { tiers: [], products: [], storeActive: false, upgradeUrl: '' };

/**
 * Tier gating for one request (or one page render): the viewer's tier level and the tier catalogue are
 * each read at most once, then every access check is the pure decideTierAccess.
 */
export class TierGate {
  private level?: Promise<number | null>;
  private cat?: Promise<TierCatalogue>;

  constructor(
    private readonly db: Kysely<DB>,
    private readonly settings: Settings,
    private readonly clock: Clock,
    readonly viewer: GateViewerIdentity,
    /** The server's read caches for the catalogue and the viewer's tier (none: both read from the database). */
    private readonly caches: GateCaches | undefined,
    /** Where the viewer's tier comes from: the request's tier reader when there is one. */
    private readonly userTier: (userId: number) => Promise<UserTier | null> = (userId) => fetchUserTier(db, userId, caches?.userTiers),
  ) {}

  get isStaff(): boolean {
    return this.viewer.permission >= STAFF_PERMISSION;
  }

  viewerLevel(): Promise<number | null> {
    if (this.viewer.userId === null) return Promise.resolve(null);
    this.level ??= this.userTier(this.viewer.userId).then((t) => t?.level ?? null);
    return this.level;
  }

  catalogue(): Promise<TierCatalogue> {
    this.cat ??= (async () => {
      const active = storeActive(this.settings);
      const cache = this.caches?.catalogue;
      const [tiers, products] = await Promise.all([catalogueRows(this.db, 'tiers', cache), active ? catalogueRows(this.db, 'products', cache) : []]);
      return {
        tiers: tiers.map((t) => ({ tier_id: Number(t.sbt_subscription_tier_id), name: String(t.sbt_name), display_name: String(t.sbt_display_name), tier_level: Number(t.sbt_tier_level) })),
        products: products.map((p: Row) => ({ product_id: Number(p.pro_product_id), name: String(p.pro_name), link: (p.pro_link as string | null) ?? null, tier_id: Number(p.pro_sbt_subscription_tier_id) })),
        storeActive: active,
        upgradeUrl: this.settings.string('tier_upgrade_url'),
      };
    })();
    return this.cat;
  }

  async checkGate(gate: EntityGate): Promise<TierAccessResult> {
    // An ungated entity's result names no tier: the catalogue is read only for gated ones (and then
    // alongside the viewer's level).
    const [tierLevel, catalogue] =
      gate.minLevel === null ? [await this.viewerLevel(), NO_CATALOGUE] : await Promise.all([this.viewerLevel(), this.catalogue()]);
    return decideTierAccess(gate, { userId: this.viewer.userId, permission: this.viewer.permission, tierLevel }, catalogue, this.clock.now());
  }

  check(model: GatableModel, row: Row): Promise<TierAccessResult> {
    return this.checkGate(entityGate(model, row));
  }

  /**
   * A row as a denied viewer may see it: the first gated body column becomes the plain-text preview
   * (tier_gate_preview_length characters; null at 0), the other gated columns null.
   */
  redact(model: GatableModel, row: Row): Row {
    const out = { ...row };
    const length = this.settings.int('tier_gate_preview_length');
    (model.gate?.body ?? []).forEach((column, i) => {
      if (column in out) out[column] = i === 0 ? gatePreview(row[column], length) : null;
    });
    return out;
  }

  /**
   * The SQL condition of rows this viewer may open (for listings that hide the rest): no gate, a level
   * the viewer's tier meets, or early access over. Null for staff, who see everything.
   */
  async openRowsCondition(model: GatableModel): Promise<((eb: ExpressionBuilder<any, any>) => any) | null> {
    if (!model.gate || this.isStaff) return null;
    const level = await this.viewerLevel();
    return openRowsExpression(model, level !== null, level, this.clock.now());
  }
}

/**
 * The condition of rows of a gatable model that a viewer with tier level `level` (when `hasLevel`) may
 * open at `now`. `level` and `now` are used only as values, so a compiled query can take them as
 * parameters; the condition's shape depends on `hasLevel` alone.
 */
export function openRowsExpression(model: GatableModel, hasLevel: boolean, level: unknown, now: unknown): (eb: ExpressionBuilder<any, any>) => any {
  const g = model.gate!;
  const publicFrom = publicFromExpression(model);
  return (eb) => {
    const open = [eb(g.minLevel, 'is', null)];
    if (hasLevel) open.push(eb(g.minLevel, '<=', level));
    if (publicFrom) open.push(eb.and([eb(g.publicAfterHours!, 'is not', null), eb(publicFrom, '<=', now as Date)]));
    return eb.or(open);
  };
}

/**
 * When a gated row opens to everyone (its publish or create time plus tier_public_after_hours; null when
 * it never does), or null for a model without public-after-hours: the only time openRowsExpression's
 * verdict on a row depends on.
 */
export function publicFromExpression(model: GatableModel): RawBuilder<Date | null> | null {
  const g = model.gate;
  if (!g?.publicAfterHours) return null;
  const created = `${model.prefix}_create_time`;
  const start = g.publishedTime ? sql`coalesce(${sql.ref(g.publishedTime)}, ${sql.ref(created)})` : sql.ref(created);
  return sql<Date | null>`${start} + make_interval(hours => ${sql.ref(g.publicAfterHours)})`;
}

/** The live, active tiers by level, or the active products linked to a tier: from memory while neither table changed. */
async function catalogueRows(db: Kysely<DB>, which: 'tiers' | 'products', cache: GateCaches['catalogue'] | undefined): Promise<Row[]> {
  const read = async (): Promise<Row[]> =>
    which === 'tiers'
      ? db
          .selectFrom('sbt_subscription_tiers')
          .select(['sbt_subscription_tier_id', 'sbt_name', 'sbt_display_name', 'sbt_tier_level'])
          .where('sbt_is_active', '=', true)
          .where('sbt_delete_time', 'is', null)
          .orderBy('sbt_tier_level')
          .execute()
      : (db as unknown as Kysely<any>)
          .selectFrom('pro_products')
          .select(['pro_product_id', 'pro_name', 'pro_link', 'pro_sbt_subscription_tier_id'])
          .where('pro_sbt_subscription_tier_id', 'is not', null)
          .where('pro_is_active', '=', true)
          .where('pro_delete_time', 'is', null)
          .orderBy('pro_product_id')
          .execute();
  const served = cache?.through(db);
  return (served ? await served.get(which, Date.now(), read) : await read()) ?? [];
}

const contextGates = new WeakMap<GateContext, TierGate>();

/** The context's tier gate (one per request), made from the context's viewer when it has none. */
export function gateFor(ctx: GateContext): TierGate {
  if (ctx.tierGate) return ctx.tierGate;
  let gate = contextGates.get(ctx);
  if (!gate) {
    gate = new TierGate(ctx.db, ctx.settings, ctx.clock, { userId: ctx.viewer.current_user_id, permission: ctx.viewer.current_user_permission }, ctx.caches);
    contextGates.set(ctx, gate);
  }
  return gate;
}
