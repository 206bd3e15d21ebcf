import { col, type CollectionFilter, type ColumnSpec, type RecordCheck } from './define.js';

/** {prefix}_create_time, _update_time, _delete_time (DESIGN 6); the CRUD surface never writes them from input. */
export function standardTimes(prefix: string): Record<string, ColumnSpec> {
  return {
    [`${prefix}_create_time`]: col.timestamp(),
    [`${prefix}_update_time`]: col.timestamp(),
    [`${prefix}_delete_time`]: col.timestamp(),
  };
}

/** Writes by staff (usr_permission 5+) only, even on rows that carry an author column. */
export const staffOnly: RecordCheck = (_row, ctx) => ctx.viewer.current_user_permission >= 5;

/**
 * The contract's max_visible_tier_level collection filter: hides rows gated above the given level
 * (a null min level is no gate).
 */
export function maxVisibleTierLevel(column: string): CollectionFilter {
  return {
    parse(raw) {
      if (!/^-?\d{1,9}$/.test(raw)) return { error: 'max_visible_tier_level must be an integer' };
      return { value: Number(raw) };
    },
    apply(query, value) {
      return query.where((eb: any) => eb.or([eb(column, 'is', null), eb(column, '<=', value as number)]));
    },
  };
}
