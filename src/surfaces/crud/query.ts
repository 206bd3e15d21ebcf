import { type Kysely, type SelectQueryBuilder } from 'kysely';
import type { DB } from '../../db/types.js';
import type { Model, Row, ViewableReader } from '../../models/define.js';
import { preparedQuery } from '../../db/prepared.js';
import { openRowsExpression } from '../../tiers/gate-context.js';
import { transactionError } from '../../http/errors.js';
import type { Scope } from './authorize.js';
import { sortColumn } from './fields.js';
import { readCachesOf } from '../../cache/read-caches.js';

/** Model tables are reached through their declarations; every identifier below comes from one. */
const anyDb = (db: Kysely<DB>) => db as unknown as Kysely<any>;
type AnySelect = SelectQueryBuilder<any, any, any>;

export const DEFAULT_NUMPERPAGE = 3;
/** A collection page never holds more than this many rows; a larger numperpage is clamped to it. */
export const MAX_NUMPERPAGE = 1000;

export interface CollectionParams {
  page: number;
  numperpage: number;
  sort: string;
  direction: 'asc' | 'desc';
  filters: Array<{ name: string; value: unknown }>;
  /** A non-staff reader: the model's is-viewable check applies (counted like any filter). */
  reader?: RowReader;
  /** Leave out rows the reader cannot open (tier_gate_hide_from_listings), at the reader's tier level. */
  openRowsFor?: { level: number | null; now: Date };
}

function intParam(name: string, raw: unknown, fallback: number, min: number): number {
  if (raw === undefined || raw === '') return fallback;
  if (typeof raw !== 'string' || !/^\d{1,9}$/.test(raw) || Number(raw) < min) throw transactionError(`Invalid ${name}: expected an integer of at least ${min}`);
  return Number(raw);
}

/** page, numperpage, sort, sdirection and the model's declared filters; any other parameter is ignored. */
export function parseCollectionParams(model: Model, query: Record<string, unknown>): CollectionParams {
  const page = intParam('page', query.page, 0, 0);
  const numperpage = Math.min(intParam('numperpage', query.numperpage, DEFAULT_NUMPERPAGE, 1), MAX_NUMPERPAGE);
  let sort = model.primaryKey;
  if (query.sort !== undefined && query.sort !== '') {
    const resolved = typeof query.sort === 'string' ? sortColumn(model, query.sort) : null;
    if (!resolved) throw transactionError('Invalid sort column');
    sort = resolved;
  }
  const direction = typeof query.sdirection === 'string' && query.sdirection.toUpperCase() === 'DESC' ? 'desc' : 'asc';
  const filters: CollectionParams['filters'] = [];
  for (const [name, filter] of Object.entries(model.filters ?? {})) {
    const raw = query[name];
    if (raw === undefined || raw === '') continue;
    const parsed = typeof raw === 'string' ? filter.parse(raw) : { error: `${name} must be a single value` };
    if ('error' in parsed) throw transactionError(parsed.error);
    filters.push({ name, value: parsed.value });
  }
  return { page, numperpage, sort, direction, filters };
}

/** What a listing's statement takes as parameters; its shape is in ListingShape. */
interface ListingValues extends Record<string, unknown> {
  userId: number | null;
  permission: number;
  tierLevel: number | null;
  now: Date;
  ownerId: number | null;
  level: number | null;
  openNow: Date;
  limit: number;
  offset: number;
  filterValues: unknown[];
}

/** Everything that decides a listing's SQL text; values go to ListingValues. */
interface ListingShape {
  /** The owner columns of an owner-scoped listing (any of them equal to ownerId); null for all rows. */
  ownerColumns: string[] | null;
  sort: string;
  direction: 'asc' | 'desc';
  filterNames: string[];
  viewable: boolean;
  open: 'none' | 'no-level' | 'level';
  /** Select only the primary keys: the rows of a cached model come from its row cache. */
  idsOnly: boolean;
}

/** The scoped, live, filtered rows of a model, before paging. */
function scopedQuery(db: Kysely<DB>, model: Model, shape: ListingShape, v: ListingValues): AnySelect {
  let q: AnySelect = anyDb(db).selectFrom(model.table);
  if (model.deleteColumn) q = q.where(model.deleteColumn, 'is', null);
  const owners = shape.ownerColumns;
  if (owners) q = q.where((eb) => eb.or(owners.map((c) => eb(c, '=', v.ownerId))));
  shape.filterNames.forEach((name, i) => {
    q = model.filters![name]!.apply(q, (v.filterValues as unknown[])[i]);
  });
  if (shape.viewable) q = q.where((eb) => model.viewable!(eb, readerOf(v)));
  if (shape.open !== 'none') q = q.where(openRowsExpression(model, shape.open === 'level', v.level, v.openNow));
  return q;
}

function pageQuery(db: Kysely<DB>, model: Model, shape: ListingShape, v: ListingValues): AnySelect {
  let q = scopedQuery(db, model, shape, v)
    .select(shape.idsOnly ? [model.primaryKey] : Object.keys(model.columns))
    // The count as an uncorrelated subquery (computed once): a window count buffered every wide row
    // before the sort and cost PostgreSQL eight times the page's own time.
    .select(scopedQuery(db, model, shape, v).select((eb) => eb.fn.countAll().as('n')).as(TOTAL))
    .orderBy(shape.sort, shape.direction);
  if (shape.sort !== model.primaryKey) q = q.orderBy(model.primaryKey, 'asc');
  return q.limit(v.limit).offset(v.offset);
}

/** Each listing shape's page statement, compiled once (a listing runs it on every request). */
const pageQueries = new WeakMap<Model, Map<string, (db: Kysely<DB>, v: ListingValues) => Promise<Row[]>>>();

function preparedPage(model: Model, shape: ListingShape) {
  let byShape = pageQueries.get(model);
  if (!byShape) pageQueries.set(model, (byShape = new Map()));
  const key = JSON.stringify(shape);
  let query = byShape.get(key);
  if (!query) {
    // Filter values are stand-ins too: one per filter, in the shape's order.
    const filterCount = shape.filterNames.length;
    const prepared = preparedQuery((pdb, p: ListingValues & Record<`filter${number}`, unknown>) =>
      pageQuery(pdb, model, shape, { ...p, filterValues: Array.from({ length: filterCount }, (_, i) => p[`filter${i}`]) }) as SelectQueryBuilder<any, any, Row>,
    );
    query = (pdb, v) => prepared(pdb, { ...v, ...Object.fromEntries(v.filterValues.map((value, i) => [`filter${i}`, value])) });
    byShape.set(key, query);
  }
  return query;
}

/**
 * num_results is counted in the database, after scoping and filters, in the same statement as the page;
 * only a page past the end needs a count of its own.
 */
export async function loadCollection(db: Kysely<DB>, model: Model, scope: Scope, params: CollectionParams): Promise<{ total: number; rows: Row[] }> {
  if (scope.kind === 'none') return { total: 0, rows: [] };
  const open = params.openRowsFor;
  // For a cached model the statement still decides which rows the reader sees (scope, filters, the
  // is-viewable check at this request's time, order, page), but returns only their keys: reading and
  // decoding twenty wide rows was most of a page's cost on the embedded database.
  const cache = readCachesOf(db)?.rowsOf(model);
  const shape: ListingShape = {
    ownerColumns: scope.kind === 'owner' ? scope.columns : null,
    sort: params.sort,
    direction: params.direction,
    filterNames: params.filters.map((f) => f.name),
    viewable: params.reader !== undefined && model.viewable !== undefined,
    open: open === undefined || !model.gate ? 'none' : open.level === null ? 'no-level' : 'level',
    idsOnly: cache !== undefined,
  };
  const values: ListingValues = {
    userId: params.reader?.viewer.current_user_id ?? null,
    permission: params.reader?.viewer.current_user_permission ?? 0,
    tierLevel: params.reader?.tierLevel ?? null,
    now: params.reader?.now ?? new Date(0),
    ownerId: scope.kind === 'owner' ? scope.userId : null,
    level: open?.level ?? null,
    openNow: open?.now ?? new Date(0),
    limit: params.numperpage,
    offset: params.page * params.numperpage,
    filterValues: params.filters.map((f) => f.value),
  };
  const page = await preparedPage(model, shape)(db, values);
  if (page.length === 0) {
    if (params.page === 0) return { total: 0, rows: [] };
    const counted = await scopedQuery(db, model, shape, values).select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow();
    return { total: Number((counted as { n: unknown }).n), rows: [] };
  }
  const total = Number(page[0]![TOTAL]);
  if (!cache) return { total, rows: page.map(({ [TOTAL]: _total, ...row }) => row) };
  const rows: Row[] = [];
  for (const { [model.primaryKey]: key } of page) {
    const id = Number(key);
    const row = await cache.get(id, Date.now(), async () => (await rowQuery(model, false, false)(db, { id, userId: null, permission: 0, tierLevel: null, now: new Date(0) }))[0]);
    // Deleted since the page was read: left out, as a read a moment later would.
    if (row) rows.push({ ...row });
  }
  return { total, rows };
}

/** The window count's alias: no model column can be named so (every column carries its prefix). */
const TOTAL = '__num_results';

/** Whose is-viewable check a read applies: a non-staff reader's, at the request's time. */
export type RowReader = ViewableReader;

interface RowParams extends Record<string, unknown> {
  id: number;
  userId: number | null;
  permission: number;
  tierLevel: number | null;
  now: Date;
}

/** The reader as an is-viewable check sees it, from a statement's parameters (stand-ins when compiling). */
function readerOf(p: { userId: number | null; permission: number; tierLevel: number | null; now: Date }): ViewableReader {
  return { viewer: { current_user_id: p.userId, current_user_permission: p.permission }, tierLevel: p.tierLevel, now: p.now };
}

/** loadRow's statement per model and variant, compiled once (it runs on every single read). */
const rowQueries = new WeakMap<Model, Map<string, (db: Kysely<DB>, p: RowParams) => Promise<Row[]>>>();

function rowQuery(model: Model, forUpdate: boolean, viewable: boolean) {
  let byVariant = rowQueries.get(model);
  if (!byVariant) rowQueries.set(model, (byVariant = new Map()));
  const variant = `${forUpdate}/${viewable}`;
  let query = byVariant.get(variant);
  if (!query) {
    query = preparedQuery((db, p: RowParams) => {
      let q: AnySelect = anyDb(db).selectFrom(model.table).select(Object.keys(model.columns)).where(model.primaryKey, '=', p.id);
      if (model.deleteColumn) q = q.where(model.deleteColumn, 'is', null);
      if (viewable) q = q.where((eb) => model.viewable!(eb, readerOf(p)));
      if (forUpdate) q = q.forUpdate();
      return q as SelectQueryBuilder<any, any, Row>;
    });
    byVariant.set(variant, query);
  }
  return query;
}

/**
 * A live (not soft-deleted) row by primary key; with a reader, only if the model's is-viewable check
 * admits that reader (pass none for staff); in a write transaction the row is locked. A row of a cached
 * model comes from memory while it is unchanged (see ReadCaches); the is-viewable check is then asked of
 * it here, at the reader's time, as the statement would have.
 */
export async function loadRow(db: Kysely<DB>, model: Model, id: number, forUpdate = false, reader?: RowReader): Promise<Row | undefined> {
  const viewable = reader !== undefined && model.viewable !== undefined;
  const cache = forUpdate ? undefined : readCachesOf(db)?.rowsOf(model);
  if (cache) {
    const row = await cache.get(id, Date.now(), async () => (await rowQuery(model, false, false)(db, { id, userId: null, permission: 0, tierLevel: null, now: new Date(0) }))[0]);
    if (!row || (viewable && !model.viewableRow!(row, reader))) return undefined;
    return { ...row };
  }
  const [row] = await rowQuery(model, forUpdate, viewable)(db, {
    id,
    userId: reader?.viewer.current_user_id ?? null,
    permission: reader?.viewer.current_user_permission ?? 0,
    tierLevel: reader?.tierLevel ?? null,
    now: reader?.now ?? new Date(0),
  });
  return row;
}

export async function insertRow(db: Kysely<DB>, model: Model, values: Row): Promise<number> {
  const row = await anyDb(db).insertInto(model.table).values(values).returning(model.primaryKey).executeTakeFirstOrThrow();
  return Number((row as Row)[model.primaryKey]);
}

export async function deleteRow(db: Kysely<DB>, model: Model, id: number): Promise<void> {
  await anyDb(db).deleteFrom(model.table).where(model.primaryKey, '=', id).execute();
}

export async function updateRow(db: Kysely<DB>, model: Model, id: number, values: Row): Promise<void> {
  if (Object.keys(values).length === 0) return;
  await anyDb(db).updateTable(model.table).set(values).where(model.primaryKey, '=', id).execute();
}
