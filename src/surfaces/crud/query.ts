import { sql, type Kysely, type RawBuilder, type SelectQueryBuilder } from 'kysely';
import type { DB } from '../../db/types.js';
import type { ListedPage, Model, ModelCaches, Row, ViewableReader } from '../../models/define.js';
import { preparedQuery } from '../../db/prepared.js';
import { openRowsExpression, publicFromExpression } from '../../models/gate.js';
import { transactionError } from '../../http/errors.js';
import type { Scope } from './authorize.js';
import { sortColumn } from './fields.js';
import type { ReadCache } from '../../cache/read-cache.js';

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
  // Exactly 'DESC' sorts descending; any other value ('desc' included) reads as ASC, as the contract says.
  const direction = query.sdirection === 'DESC' ? 'desc' : 'asc';
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

/** A listing shape's page statement, compiled once (a listing runs it on every request). */
interface PreparedPage {
  run(db: Kysely<DB>, v: ListingValues): Promise<Row[]>;
  /** The names of the ListingValues the statement uses ('filter0'... for filter values). */
  uses(db: Kysely<DB>, v: ListingValues): ReadonlySet<string>;
}

const pageQueries = new WeakMap<Model, Map<string, PreparedPage>>();

/** A listing's values as its prepared statement takes them: filter values as filter0, filter1... */
function statementValues(v: ListingValues): ListingValues & Record<`filter${number}`, unknown> {
  return { ...v, ...Object.fromEntries(v.filterValues.map((value, i) => [`filter${i}`, value])) };
}

function preparedPage(model: Model, shape: ListingShape): PreparedPage {
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
    query = { run: (pdb, v) => prepared(pdb, statementValues(v)), uses: (pdb, v) => prepared.uses(pdb, statementValues(v)) };
    byShape.set(key, query);
  }
  return query;
}

/**
 * num_results is counted in the database, after scoping and filters, in the same statement as the page;
 * only a page past the end needs a count of its own.
 */
export async function loadCollection(db: Kysely<DB>, model: Model, scope: Scope, params: CollectionParams, caches?: ModelCaches): Promise<{ total: number; rows: Row[] }> {
  if (scope.kind === 'none') return { total: 0, rows: [] };
  const open = params.openRowsFor;
  // For a cached model the statement still decides which rows the reader sees (scope, filters, the
  // is-viewable check at this request's time, order, page), but returns only their keys: reading and
  // decoding twenty wide rows was most of a page's cost on the embedded database.
  const cache = caches?.rowsOf(model)?.through(db);
  const listings = caches?.listingsOf(model)?.through(db);
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
  const query = preparedPage(model, shape);
  if (!cache) {
    const page = await query.run(db, values);
    if (page.length === 0) return { total: await pastTheEnd(db, model, shape, values), rows: [] };
    return { total: Number(page[0]![TOTAL]), rows: page.map(({ [TOTAL]: _total, ...row }) => row) };
  }
  const listed = await listedPage(db, model, shape, values, query, listings);
  const rows: Row[] = [];
  for (const id of listed.keys) {
    const row = await cache.get(id, Date.now(), async () => (await rowQuery(model, false, false)(db, { id, userId: null, permission: 0, tierLevel: null, now: new Date(0) }))[0]);
    // Deleted since the page was read: left out, as a read a moment later would.
    if (row) rows.push({ ...row });
  }
  return { total: listed.total, rows };
}

/** num_results for a page past the end (the first page being empty means there is nothing). */
async function pastTheEnd(db: Kysely<DB>, model: Model, shape: ListingShape, values: ListingValues): Promise<number> {
  if (values.offset === 0) return 0;
  const counted = await scopedQuery(db, model, shape, values).select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow();
  return Number((counted as { n: unknown }).n);
}

/**
 * A cached model's page as keys and num_results: from memory while the model's table is unchanged (any
 * write to it, by any process, forgets its pages) and the request's time has not passed the next instant
 * at which a row's verdict changes (a scheduled post's publish time, a gated row's public-after-hours).
 * Entries are shared by readers whose values the statement uses alike: a listing that does not use the
 * reader's id is one entry for every reader. A check that uses the time without declaring
 * `viewableTimes` is never cached.
 */
async function listedPage(
  db: Kysely<DB>,
  model: Model,
  shape: ListingShape,
  values: ListingValues,
  query: PreparedPage,
  listings: ReadCache<string, ListedPage> | undefined,
): Promise<ListedPage> {
  const uses = query.uses(db, values);
  const read = () => readListedPage(db, model, shape, values, query, uses, listings);
  if (!listings || (uses.has('now') && !model.viewableTimes)) return read();
  const statement = statementValues(values) as Record<string, unknown>;
  const used = [...uses].filter((name) => name !== 'now' && name !== 'openNow').sort();
  const key = JSON.stringify([shape, used.map((name) => [name, statement[name]])]);
  const usable = (page: ListedPage) => holdsAt(page, values);
  const page = await listings.get(key, Date.now(), read, usable);
  // A read shared with a concurrent request may have been made for another moment.
  return page && usable(page) ? page : read();
}

async function readListedPage(
  db: Kysely<DB>,
  model: Model,
  shape: ListingShape,
  values: ListingValues,
  query: PreparedPage,
  uses: ReadonlySet<string>,
  listings: ReadCache<string, ListedPage> | undefined,
): Promise<ListedPage> {
  const from = { now: uses.has('now') ? values.now.getTime() : null, openNow: uses.has('openNow') ? values.openNow.getTime() : null };
  const page = await query.run(db, values);
  const total = page.length === 0 ? await pastTheEnd(db, model, shape, values) : Number(page[0]![TOTAL]);
  const keys = page.map((row) => Number(row[model.primaryKey]));
  return { total, keys, from, untilMs: await sharedVerdictChange(db, model, from, listings) };
}

/** Whether an edge read at entry.from is the edge at `from` too: no verdict changes between the two. */
function edgeHolds(entry: ListedPage, from: ListedPage['from']): boolean {
  const within = (at: number | null, t: number | null) => at === null || (t !== null && t >= at && (entry.untilMs === null || t < entry.untilMs));
  return within(entry.from.now, from.now) && within(entry.from.openNow, from.openNow);
}

/**
 * nextVerdictChange, kept with the model's listings: the next verdict change after a time is the same for
 * every later time before it, whatever the page, filter or reader, while the table is unchanged (any write
 * forgets the listings). A page that no cache holds (a filter value never asked before) then costs its one
 * statement, not a second one scanning the table for the same edge.
 */
async function sharedVerdictChange(db: Kysely<DB>, model: Model, from: ListedPage['from'], listings: ReadCache<string, ListedPage> | undefined): Promise<number | null> {
  if (!listings || (from.now === null && from.openNow === null)) return nextVerdictChange(db, model, from);
  const key = JSON.stringify(['verdict edge', from.now !== null, from.openNow !== null]);
  const edge = await listings.get(key, Date.now(), async () => ({ total: 0, keys: [], from, untilMs: await nextVerdictChange(db, model, from) }), (e) => edgeHolds(e, from));
  return edge && edgeHolds(edge, from) ? edge.untilMs : nextVerdictChange(db, model, from);
}

/** Whether a page read at page.from still holds at the values' times. */
function holdsAt(page: ListedPage, values: ListingValues): boolean {
  const within = (from: number | null, at: Date) => from === null || (at.getTime() >= from && (page.untilMs === null || at.getTime() < page.untilMs));
  return within(page.from.now, values.now) && within(page.from.openNow, values.openNow);
}

/**
 * The first instant after the given times at which any live row's is-viewable verdict (its
 * viewableTimes) or open-to-everyone verdict (publicFromExpression) changes; null when none will.
 */
async function nextVerdictChange(db: Kysely<DB>, model: Model, from: ListedPage['from']): Promise<number | null> {
  const edges: RawBuilder<unknown>[] = [];
  if (from.now !== null) {
    const now = new Date(from.now);
    for (const column of model.viewableTimes ?? []) edges.push(sql`min(case when ${sql.ref(column)} > ${now} then ${sql.ref(column)} end)`);
  }
  const publicFrom = from.openNow === null ? null : publicFromExpression(model);
  if (publicFrom) {
    const openNow = new Date(from.openNow!);
    edges.push(sql`min(case when ${publicFrom} > ${openNow} then ${publicFrom} end)`);
  }
  if (edges.length === 0) return null;
  let q: AnySelect = anyDb(db).selectFrom(model.table).select(sql<Date | null>`least(${sql.join(edges)})`.as('until'));
  if (model.deleteColumn) q = q.where(model.deleteColumn, 'is', null);
  const row = (await q.executeTakeFirst()) as { until: Date | string | null } | undefined;
  return row?.until == null ? null : new Date(row.until).getTime();
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
 * model comes from `caches` while it is unchanged (never through a transaction: see ReadCache.through);
 * the is-viewable check is then asked of it here, at the reader's time, as the statement would have.
 */
export async function loadRow(db: Kysely<DB>, model: Model, id: number, forUpdate = false, reader?: RowReader, caches?: ModelCaches): Promise<Row | undefined> {
  const viewable = reader !== undefined && model.viewable !== undefined;
  const cache = forUpdate ? undefined : caches?.rowsOf(model)?.through(db);
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

/**
 * Inserts a row and answers it as loadRow would read it back in the same transaction (every model column;
 * none when it was written soft-deleted): one statement where an insert and a read were two.
 */
export async function insertAndReturnRow(db: Kysely<DB>, model: Model, values: Row): Promise<Row | undefined> {
  const row = (await anyDb(db).insertInto(model.table).values(values).returning(Object.keys(model.columns)).executeTakeFirstOrThrow()) as Row;
  if (model.deleteColumn && row[model.deleteColumn] != null) return undefined;
  return row;
}

export async function deleteRow(db: Kysely<DB>, model: Model, id: number): Promise<void> {
  await anyDb(db).deleteFrom(model.table).where(model.primaryKey, '=', id).execute();
}

export async function updateRow(db: Kysely<DB>, model: Model, id: number, values: Row): Promise<void> {
  if (Object.keys(values).length === 0) return;
  await anyDb(db).updateTable(model.table).set(values).where(model.primaryKey, '=', id).execute();
}
