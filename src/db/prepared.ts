import { createQueryId, type Compilable, type CompiledQuery, type Kysely } from 'kysely';
import type { DB } from './types.js';

/** Stands in for a parameter while the query is compiled; replaced by the value on every run. */
class Slot {
  constructor(readonly name: string) {}
}

type Slots<P> = { readonly [K in keyof P]: P[K] };

/**
 * A query built and compiled once, then run with new parameter values. Kysely builds, freezes and compiles
 * a query's tree on every execute; for the statements every request runs (the API-key lookup) that is
 * a real share of the request, and the SQL text does not change. `build` receives stand-ins for the
 * parameters and may use each only as a single value, never to choose the query's shape (a stand-in
 * compared or tested in JavaScript would fix the shape of its first run for every run) and never as the
 * list of an `in` (a list's length is shape).
 */
export interface PreparedQuery<P, R> {
  (db: Kysely<DB>, params: P): Promise<R[]>;
  /** The names of the parameters the statement uses (compiling it first if it was not yet). */
  uses(db: Kysely<DB>, params: P): ReadonlySet<string>;
}

export function preparedQuery<P extends Record<string, unknown>, R>(
  build: (db: Kysely<DB>, params: Slots<P>) => Compilable<R>,
): PreparedQuery<P, R> {
  let compiled: { sql: string; query: CompiledQuery['query']; parameters: ReadonlyArray<unknown>; slots: Array<[number, string]>; names: ReadonlySet<string> } | undefined;

  function compile(db: Kysely<DB>, params: P) {
    const names = Object.keys(params);
    const stand = Object.fromEntries(names.map((n) => [n, new Slot(n)])) as unknown as Slots<P>;
    const query = build(db, stand).compile();
    const slots: Array<[number, string]> = [];
    query.parameters.forEach((v, i) => {
      if (v instanceof Slot) slots.push([i, v.name]);
    });
    return { sql: query.sql, query: query.query, parameters: query.parameters, slots, names: new Set(slots.map(([, name]) => name)) };
  }

  const run = async (db: Kysely<DB>, params: P): Promise<R[]> => {
    compiled ??= compile(db, params);
    const parameters = compiled.parameters.slice();
    for (const [i, name] of compiled.slots) parameters[i] = params[name];
    const query: CompiledQuery<R> = { sql: compiled.sql, query: compiled.query, parameters, queryId: createQueryId() };
    return (await db.executeQuery(query)).rows;
  };
  return Object.assign(run, {
    uses(db: Kysely<DB>, params: P): ReadonlySet<string> {
      compiled ??= compile(db, params);
      return compiled.names;
    },
  });
}
