import type { Expression, ExpressionBuilder, SqlBool } from 'kysely';
import { openRowsExpression } from './gate.js';
import { col, type CollectionFilter, type ColumnSpec, type Model, type ModelDeclaration, type RecordCheck, type ViewableReader } from './define.js';

type Viewable = NonNullable<ModelDeclaration['viewable']>;

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

type ViewableRow = NonNullable<ModelDeclaration['viewableRow']>;

/** A timestamp column's value reached at `now` (a null one is not). */
const reached = (value: unknown, now: Date): boolean => value instanceof Date && value.getTime() <= now.getTime();

/** Post's is-viewable check: published, and its publish time (when set) reached. */
export const publishedPost: Viewable = (eb, { now }) =>
  eb.and([eb('pst_is_published', '=', true), eb.or([eb('pst_published_time', 'is', null), eb('pst_published_time', '<=', now)])]);
export const publishedPostRow: ViewableRow = (row, { now }) =>
  row.pst_is_published === true && (row.pst_published_time === null || reached(row.pst_published_time, now));

/** Page's is-viewable check: a page is published once its publish time is set and reached (a draft has none). */
export const publishedPage: Viewable = (eb, { now }) => eb.and([eb('pag_published_time', 'is not', null), eb('pag_published_time', '<=', now)]);
export const publishedPageRow: ViewableRow = (row, { now }) => reached(row.pag_published_time, now);

/** Event's is-viewable check: evt_visibility 0 is a private event, seen by staff only (as in the event actions). */
export const visibleEvent: Viewable = (eb) => eb.or([eb('evt_visibility', 'is', null), eb('evt_visibility', '<>', 0)]);
export const visibleEventRow: ViewableRow = (row) => row.evt_visibility === null || Number(row.evt_visibility) !== 0;

/**
 * Video's is-viewable check: the viewer's permission reaches vid_min_permission, and when the video
 * belongs to a group (vid_grp_group_id) the viewer is a member of it.
 */
export const viewableVideo: Viewable = (eb, { viewer }) =>
  eb.and([
    eb.or([eb('vid_min_permission', 'is', null), eb('vid_min_permission', '<=', viewer.current_user_permission)]),
    eb.or([
      eb('vid_grp_group_id', 'is', null),
      eb.exists(
        eb
          .selectFrom('grm_group_members')
          .select('grm_group_member_id')
          .whereRef('grm_grp_group_id', '=', 'vid_grp_group_id')
          .where('grm_foreign_key_id', '=', viewer.current_user_id ?? 0),
      ),
    ]),
  ]);

/**
 * A child row is seen only where its parent is (SPEC, tier rule 3: the tier check inside the is-viewable
 * check): the parent row named by `column` is live, passes the parent's is-viewable check, and its tier
 * gate opens for the reader (no gate, a level the reader's tier meets, or early access over). A child of
 * a gated parent is not found, not previewed: its content is the parent's.
 */
export function viewableParent(parent: Model, column: string): (eb: ExpressionBuilder<any, any>, reader: ViewableReader) => Expression<SqlBool> {
  return (eb, reader) => {
    let q = eb.selectFrom(parent.table).select(parent.primaryKey).whereRef(parent.primaryKey, '=', column);
    if (parent.deleteColumn) q = q.where(parent.deleteColumn, 'is', null);
    if (parent.viewable) q = q.where((inner) => parent.viewable!(inner, reader));
    // The level goes in as a value: null (tierless, anonymous) meets no level.
    if (parent.gate) q = q.where(openRowsExpression(parent, true, reader.tierLevel, reader.now));
    return eb.exists(q);
  };
}
