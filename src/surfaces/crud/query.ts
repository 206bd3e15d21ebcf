import { sql, type Kysely, type SelectQueryBuilder } from 'kysely';
import type { DB } from '../../db/types.js';
import type { Model, RecordViewer, Row } from '../../models/define.js';
import { preparedQuery } from '../../db/prepared.js';
import { transactionError } from '../../http/errors.js';
import type { Scope } from './authorize.js';
import { sortColumn } from './fields.js';

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
  /** Conditions the surface adds (e.g. hiding gated rows from listings); counted like any filter. */
  conditions?: Array<(eb: any) => any>;
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

/** The scoped, live, filtered rows of a model, before paging. */
function scopedQuery(db: Kysely<DB>, model: Model, scope: Scope, params: CollectionParams): AnySelect {
  let q: AnySelect = anyDb(db).selectFrom(model.table);
  if (model.deleteColumn) q = q.where(model.deleteColumn, 'is', null);
  if (scope.kind === 'owner') {
    const { columns, userId } = scope;
    q = q.where((eb) => eb.or(columns.map((c) => eb(c, '=', userId))));
  }
  for (const { name, value } of params.filters) q = model.filters![name]!.apply(q, value);
  for (const condition of params.conditions ?? []) q = q.where(condition);
  return q;
}

/**
 * num_results is counted in the database, after scoping and filters, in the same query as the page
 * (a window count over the matching rows); only a page past the end needs a count of its own.
 */
export async function loadCollection(db: Kysely<DB>, model: Model, scope: Scope, params: CollectionParams): Promise<{ total: number; rows: Row[] }> {
  if (scope.kind === 'none') return { total: 0, rows: [] };
  let q = scopedQuery(db, model, scope, params)
    .select(Object.keys(model.columns))
    .select(sql<number>`count(*) over ()`.as(TOTAL))
    .orderBy(params.sort, params.direction);
  if (params.sort !== model.primaryKey) q = q.orderBy(model.primaryKey, 'asc');
  const page = (await q.limit(params.numperpage).offset(params.page * params.numperpage).execute()) as Row[];
  if (page.length === 0) {
    if (params.page === 0) return { total: 0, rows: [] };
    const counted = await scopedQuery(db, model, scope, params).select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow();
    return { total: Number((counted as { n: unknown }).n), rows: [] };
  }
  const total = Number(page[0]![TOTAL]);
  const rows = page.map(({ [TOTAL]: _total, ...row }) => row);
  return { total, rows };
}

/** The window count's alias: no model column can be named so (every column carries its prefix). */
const TOTAL = '__num_results';

/** Whose is-viewable check a read applies: a non-staff reader's, at the request's time. */
export interface RowReader {
  viewer: RecordViewer;
  now: Date;
}

interface RowParams extends Record<string, unknown> {
  id: number;
  userId: number | null;
  permission: number;
  now: Date;
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
      if (viewable) q = q.where((eb) => model.viewable!(eb, { current_user_id: p.userId, current_user_permission: p.permission }, p.now));
      if (forUpdate) q = q.forUpdate();
      return q as SelectQueryBuilder<any, any, Row>;
    });
    byVariant.set(variant, query);
  }
  return query;
}

/**
 * A live (not soft-deleted) row by primary key; with a reader, only if the model's is-viewable check
 * admits that reader (pass none for staff); in a write transaction the row is locked.
 */
export async function loadRow(db: Kysely<DB>, model: Model, id: number, forUpdate = false, reader?: RowReader): Promise<Row | undefined> {
  const viewable = reader !== undefined && model.viewable !== undefined;
  const [row] = await rowQuery(model, forUpdate, viewable)(db, {
    id,
    userId: reader?.viewer.current_user_id ?? null,
    permission: reader?.viewer.current_user_permission ?? 0,
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
