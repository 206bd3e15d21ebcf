import type { Expression, ExpressionBuilder, Kysely, SqlBool } from 'kysely';
import type { DB } from '../db/types.js';
import type { Clock } from '../lib/clock.js';
import type { ReadCache } from '../cache/read-cache.js';
import type { Settings } from '../settings/store.js';
import type { FeatureRegistry } from '../tiers/feature-registry.js';
import { gateFor, type GateCaches, type GateColumns, type TierGate } from './gate.js';

/** A column's storage type; drives CRUD coercion, validation and export. */
export type ColumnType = 'serial' | 'int' | 'bigint' | 'smallint' | 'bool' | 'text' | 'varchar' | 'timestamp' | 'date' | 'numeric' | 'jsonb';

export interface ColumnSpec {
  type: ColumnType;
  /** varchar length. */
  max?: number;
  /** Must be present on create (and never set to null). */
  required?: boolean;
  /** Integer bounds for CRUD input. */
  min?: number;
  maxValue?: number;
  /** Allowed values (string columns). */
  options?: readonly string[];
}

export const col = {
  serial: (): ColumnSpec => ({ type: 'serial' }),
  int: (o: Omit<ColumnSpec, 'type'> = {}): ColumnSpec => ({ type: 'int', ...o }),
  bigint: (o: Omit<ColumnSpec, 'type'> = {}): ColumnSpec => ({ type: 'bigint', ...o }),
  smallint: (o: Omit<ColumnSpec, 'type'> = {}): ColumnSpec => ({ type: 'smallint', ...o }),
  bool: (o: Omit<ColumnSpec, 'type'> = {}): ColumnSpec => ({ type: 'bool', ...o }),
  varchar: (max: number, o: Omit<ColumnSpec, 'type' | 'max'> = {}): ColumnSpec => ({ type: 'varchar', max, ...o }),
  text: (o: Omit<ColumnSpec, 'type'> = {}): ColumnSpec => ({ type: 'text', ...o }),
  timestamp: (o: Omit<ColumnSpec, 'type'> = {}): ColumnSpec => ({ type: 'timestamp', ...o }),
  date: (o: Omit<ColumnSpec, 'type'> = {}): ColumnSpec => ({ type: 'date', ...o }),
  numeric: (o: Omit<ColumnSpec, 'type'> = {}): ColumnSpec => ({ type: 'numeric', ...o }),
  jsonb: (o: Omit<ColumnSpec, 'type'> = {}): ColumnSpec => ({ type: 'jsonb', ...o }),
};

/** The caller as per-record checks see it (the contract's current_user_id / current_user_permission). */
export interface RecordViewer {
  current_user_id: number | null;
  current_user_permission: number;
}

/**
 * Whom a model's is-viewable check is asked for: a non-staff reader (staff see every row), at the
 * request's time. `tierLevel` is the reader's tier level (null when tierless or anonymous), for a check
 * that applies a parent's tier gate inside it (a comment on a gated post).
 */
export interface ViewableReader {
  viewer: RecordViewer;
  tierLevel: number | null;
  now: Date;
}

/** What model hooks (checks, derived fields, factories, filters) may use. */
export interface ModelContext {
  db: Kysely<DB>;
  clock: Clock;
  settings: Settings;
  viewer: RecordViewer;
  /** The tier feature definitions loaded at start (SubscriptionTier writes validate sbt_features against them). */
  featureRegistry: FeatureRegistry;
  /** Tier gating for this request; built on first use when absent. */
  tierGate?: TierGate;
  /** The server's read caches for model reads (none in the CLI and where a caller has none to give). */
  caches?: ModelCaches;
}

/**
 * The read caches that model reads use: the tier gate's two reads and CRUD's public reads, handed down by
 * the roof (see models/read-caches.ts). A read through a transaction is never served from them
 * (ReadCache.through).
 */
export interface ModelCaches extends GateCaches {
  /**
   * The cache of a model's rows by primary key, for a model whose rows are cached: a public-read model
   * whose is-viewable check (if any) can also be asked of a row in memory.
   */
  rowsOf(model: Model): ReadCache<number, Row> | undefined;
  /** The cache of a model's listing pages: for a model whose rows are cached (listings take them from there). */
  listingsOf(model: Model): ReadCache<string, ListedPage> | undefined;
}

/**
 * A listing's page as its statement decided it: the primary keys in order and num_results. It stays
 * right while the model's table is unchanged and the request's time is in [from, until) (see
 * loadCollection in surfaces/crud/query.ts).
 */
export interface ListedPage {
  total: number;
  keys: number[];
  /** The statement's times (the reader's and the tier gate's), as epoch ms; null where unused. */
  from: { now: number | null; openNow: number | null };
  /** The first instant after `from` at which a row's verdict could change; null when none can. */
  untilMs: number | null;
}

export type Row = Record<string, unknown>;

/**
 * A per-record check. Deny by throwing an authentication error, or by returning false. The default
 * (when a model declares none): the caller owns the row, or has usr_permission 5+; a model without an
 * owner column is staff-only.
 */
export type RecordCheck = (row: Row, ctx: ModelContext) => boolean | void | Promise<boolean | void>;

/** A computed export key; only keys named in exposure.derived ever leave the API. */
export type DerivedField = (row: Row, ctx: ModelContext) => unknown | Promise<unknown>;

/** A declared collection filter: the query parameter's raw value narrows the query, never as SQL text. */
export interface CollectionFilter {
  /** Parses the raw query value; return an error message for a bad value. */
  parse(raw: string): { value: unknown } | { error: string };
  /**
   * Adds the condition to a select over the model's table. Listings compile once per shape, so `value`
   * may only be used as a value in the condition, never to choose its shape.
   */
  apply<Q extends { where: (...args: any[]) => Q }>(query: Q, value: unknown): Q;
}

export interface Exposure {
  /** api_readable: served by GET single and collection; otherwise 404. */
  readable: boolean;
  /** api_writable: served by POST/PUT/DELETE; otherwise 404. */
  writable: boolean;
  /**
   * Written over CRUD by staff (usr_permission 5+) only: to anyone else POST/PUT/DELETE answer the 404 of
   * an unexposed verb. For workflow-bearing models (CRUD rule 6): members write them through actions.
   */
  writableBy?: 'staff';
  /** api_public_read: world-readable; per-record scope and owner filter are skipped. */
  publicRead?: boolean;
  /** api_unreadable_fields: columns never exported (on top of the name floor). */
  unreadable?: readonly string[];
  /** api_unwritable_fields: columns never written (on top of the name floor). */
  unwritable?: readonly string[];
  /** api_derived_fields: computed keys allowed into exports. */
  derived?: readonly string[];
}

export interface ModelDeclaration {
  className: string;
  table: string;
  prefix: string;
  primaryKey: string;
  /** The owner column ({prefix}_usr_user_id), or null for a model without an owner (staff-only by default). */
  owner: string | null;
  /** Soft-delete column; defaults to {prefix}_delete_time when declared among the columns. */
  deleteColumn?: string | null;
  /**
   * A model with no soft-delete column whose rows are links, not records (a group membership): DELETE
   * removes the row. Without it, such a model answers DELETE with 404.
   */
  deleteRemovesRow?: boolean;
  /** The plugin the model belongs to; it is a resource only while that plugin is active. */
  plugin?: string;
  columns: Record<string, ColumnSpec>;
  exposure: Exposure;
  derived?: Record<string, DerivedField>;
  checks?: { read?: RecordCheck; write?: RecordCheck };
  /** Owner-only even against staff (Passkey). */
  ownerOnly?: boolean;
  /**
   * Further user columns whose user may read the row as if they owned it (a message's recipient): the
   * default read check and the collection owner filter accept them; writes stay with the owner.
   */
  readerColumns?: readonly string[];
  /** The model's static CreateNew factory: receives sanitized input, returns the created row's id. */
  createNew?: (input: Row, ctx: ModelContext & { trx: Kysely<DB> }) => Promise<number>;
  /** Called with sanitized input before an update is written (e.g. validate jsonb, rename dependants). */
  beforeUpdate?: (stored: Row, changes: Row, ctx: ModelContext & { trx: Kysely<DB> }) => Promise<void>;
  /**
   * Called in the write's transaction after a CRUD create, update or delete (the row before, null on a
   * create, and after): writes what goes with the change, e.g. its outbound event (DESIGN 15).
   */
  afterWrite?: (write: { op: 'create' | 'update' | 'delete'; id: number; before: Row | null; after: Row }, ctx: ModelContext & { trx: Kysely<DB> }) => Promise<void>;
  /** Declared collection filters by query parameter name. */
  filters?: Record<string, CollectionFilter>;
  /**
   * The is-viewable check of a public-read model for non-staff readers (published state, visibility,
   * permission level, group membership), as an SQL condition: the model's one rule, used by single reads
   * and listings alike. A row failing it does not exist for that reader: a single read answers not found,
   * a listing leaves it out (and out of num_results). Soft delete comes before it and the row's own tier
   * gate (the last check) after it; a parent's tier gate is applied inside it (viewableParent). Reads
   * compile it once per shape, so the reader's values may only be used as values in the condition, never
   * to choose its shape.
   */
  viewable?: (eb: ExpressionBuilder<any, any>, reader: ViewableReader) => Expression<SqlBool>;
  /**
   * The same is-viewable check asked of a row in memory (a single read served from the row cache). A
   * model with `viewable` and without this is never served from memory. Must agree with `viewable` on
   * every row (test/api/viewable-row.test.ts holds each against the database).
   */
  viewableRow?: (row: Row, reader: ViewableReader) => boolean;
  /**
   * The timestamp columns `viewable` compares with the reader's time (as `column <= now`): its verdict
   * on a row changes only when the time passes one of their values. A model whose check uses the time
   * declares them, or its listings are never served from memory (see ListingCache in crud/query.ts).
   */
  viewableTimes?: readonly string[];
  /** Tier gating: which columns hold the gate, and which body columns are replaced by the preview. */
  gate?: GateColumns;
}

export interface Model extends ModelDeclaration {
  deleteColumn: string | null;
}

/** Every gatable model exports the derived key tier_access (DESIGN 7: tier gating in API reads). */
function withTierAccess(decl: ModelDeclaration): ModelDeclaration {
  if (!decl.gate) return decl;
  const model = decl as Model;
  return {
    ...decl,
    derived: { ...decl.derived, tier_access: (row, ctx) => gateFor(ctx).check(model, row) },
    exposure: { ...decl.exposure, derived: [...(decl.exposure.derived ?? []).filter((k) => k !== 'tier_access'), 'tier_access'] },
  };
}

export function defineModel(declaration: ModelDeclaration): Model {
  const decl = withTierAccess(declaration);
  for (const name of Object.keys(decl.columns)) {
    if (!name.startsWith(`${decl.prefix}_`)) throw new Error(`${decl.className}: column ${name} lacks prefix ${decl.prefix}_`);
  }
  if (!decl.columns[decl.primaryKey]) throw new Error(`${decl.className}: primary key ${decl.primaryKey} is not a declared column`);
  if (decl.owner && !decl.columns[decl.owner]) throw new Error(`${decl.className}: owner ${decl.owner} is not a declared column`);
  for (const c of decl.readerColumns ?? []) {
    if (!decl.owner || !decl.columns[c]) throw new Error(`${decl.className}: reader column ${c} needs an owner and a declared column`);
  }
  const conventional = `${decl.prefix}_delete_time`;
  const deleteColumn = decl.deleteColumn !== undefined ? decl.deleteColumn : decl.columns[conventional] ? conventional : null;
  for (const key of decl.exposure.derived ?? []) {
    if (!decl.derived?.[key]) throw new Error(`${decl.className}: derived field ${key} is exposed but not defined`);
  }
  const model = Object.assign(decl as Model, { deleteColumn });
  return model;
}
