import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.js';
import type { Model, ModelContext, Row } from '../../models/define.js';
import { updateRow } from './query.js';

/** The create and update times the surface maintains (set from the clock, never from input). */
export function stampTimes(model: Model, values: Row, now: Date, creating: boolean): void {
  const t = (suffix: string) => `${model.prefix}_${suffix}`;
  if (creating && model.columns[t('create_time')]) values[t('create_time')] = now;
  if (model.columns[t('update_time')]) values[t('update_time')] = now;
}

/**
 * Writes sanitized changes to a stored row, in the caller's transaction: the model's beforeUpdate hook,
 * the update time, the row. CRUD PUT and the admin edit screens both save through here.
 */
export async function updateRecord(trx: Kysely<DB>, model: Model, id: number, stored: Row, changes: Row, ctx: ModelContext): Promise<void> {
  await model.beforeUpdate?.(stored, changes, { ...ctx, trx });
  stampTimes(model, changes, ctx.clock.now(), false);
  await updateRow(trx, model, id, changes);
  await model.afterWrite?.({ op: 'update', id, before: stored, after: { ...stored, ...changes } }, { ...ctx, trx });
}
