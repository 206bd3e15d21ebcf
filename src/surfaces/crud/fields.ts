import type { Model } from '../../models/define.js';

/** The contract's name floor: never exported, never written. */
export const FLOORED_NAME = /_(password|secret|key|token|hash)$/i;

export const isFloored = (name: string): boolean => FLOORED_NAME.test(name);

const cache = new WeakMap<Model, { readable: string[]; writable: Set<string> }>();

function compute(model: Model): { readable: string[]; writable: Set<string> } {
  let c = cache.get(model);
  if (c) return c;
  const unreadable = new Set(model.exposure.unreadable ?? []);
  const unwritable = new Set(model.exposure.unwritable ?? []);
  // Bookkeeping the surface itself maintains: the key, the owner (stamped from the caller on POST), and
  // the create/update/delete times (set from the clock; DELETE is the only way to set the delete time).
  const system = new Set([model.primaryKey, `${model.prefix}_create_time`, `${model.prefix}_update_time`]);
  if (model.owner) system.add(model.owner);
  if (model.deleteColumn) system.add(model.deleteColumn);
  const names = Object.keys(model.columns);
  c = {
    readable: names.filter((n) => !isFloored(n) && !unreadable.has(n)),
    writable: new Set(names.filter((n) => !isFloored(n) && !unwritable.has(n) && !system.has(n))),
  };
  cache.set(model, c);
  return c;
}

/** Export allowlist: declared columns that pass the unreadable floor (derived keys are added by export). */
export const readableColumns = (model: Model): readonly string[] => compute(model).readable;

/** Columns CRUD input may set; anything else in the input is silently dropped. */
export const writableColumns = (model: Model): ReadonlySet<string> => compute(model).writable;

/**
 * A sort key names a declared column, with or without the table prefix; anything else is refused. An
 * unreadable column is refused too: ordering by a hash or secret would leak it a bit at a time.
 */
export function sortColumn(model: Model, raw: string): string | null {
  const readable = readableColumns(model);
  if (readable.includes(raw)) return raw;
  const prefixed = `${model.prefix}_${raw}`;
  if (readable.includes(prefixed)) return prefixed;
  return null;
}
