import type { Model, ModelContext, Row } from '../../models/define.js';
import { gateFor } from '../../models/gate.js';
import type { TierAccessResult } from '../../tiers/gating.js';
import { readableColumns } from './fields.js';
import { wireTimestamp } from '../../http/wire-json.js';

/**
 * A row as the API shows it: an allowlist of the declared columns that pass the unreadable floor, plus
 * the keys the model names in api_derived_fields. An embedded child model goes through this same
 * function with its own declaration.
 */
export async function exportRow(model: Model, row: Row, ctx: ModelContext): Promise<Row> {
  const out: Row = {};
  // Timestamps leave in the contract's format already, so the serialiser has no row to copy.
  for (const name of readableColumns(model)) {
    const value = row[name];
    out[name] = value instanceof Date ? wireTimestamp(value) : (value ?? null);
  }
  for (const key of model.exposure.derived ?? []) out[key] = await model.derived![key]!(row, ctx);
  // A row without a minimum level is open to everyone (the gate's first rule): nothing to ask the gate.
  if (model.gate && (out.tier_access !== undefined || row[model.gate.minLevel] != null)) {
    // A viewer the gate denies gets the preview in place of the gated body, never the body itself.
    const access = (out.tier_access as TierAccessResult | undefined) ?? (await gateFor(ctx).check(model, row));
    if (!access.allowed) {
      const redacted = gateFor(ctx).redact(model, row);
      for (const column of model.gate.body ?? []) if (column in out) out[column] = redacted[column];
    }
  }
  return out;
}
