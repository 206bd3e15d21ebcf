import type { Model, ModelContext, Row } from '../../models/define.js';
import { readableColumns } from './fields.js';

/**
 * A row as the API shows it: an allowlist of the declared columns that pass the unreadable floor, plus
 * the keys the model names in api_derived_fields. An embedded child model goes through this same
 * function with its own declaration.
 */
export async function exportRow(model: Model, row: Row, ctx: ModelContext): Promise<Row> {
  const out: Row = {};
  for (const name of readableColumns(model)) out[name] = row[name] ?? null;
  for (const key of model.exposure.derived ?? []) out[key] = await model.derived![key]!(row, ctx);
  return out;
}
