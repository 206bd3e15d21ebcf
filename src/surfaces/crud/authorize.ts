import type { Model, ModelContext, RecordViewer, Row } from '../../models/define.js';
import { authError, isApiError, type ApiError } from '../../http/errors.js';

const STAFF = 5;

/** The owner column, plus reader columns when reading (a message's recipient). */
function userColumns(model: Model, kind: 'read' | 'write'): string[] {
  if (!model.owner) return [];
  return kind === 'read' ? [model.owner, ...(model.readerColumns ?? [])] : [model.owner];
}

function owns(model: Model, row: Row, viewer: RecordViewer, kind: 'read' | 'write'): boolean {
  const uid = viewer.current_user_id;
  return uid !== null && userColumns(model, kind).some((c) => row[c] !== null && row[c] !== undefined && Number(row[c]) === uid);
}

/**
 * The per-record check. Owner-only models (Passkey) admit the owner alone, even against staff; a
 * public-read model admits every reader; otherwise the model's own check, else the default (the
 * caller owns the row or is staff; a model without an owner column is staff-only). A check denies by
 * returning false or by throwing an authentication error.
 */
export async function recordDecision(model: Model, row: Row, kind: 'read' | 'write', ctx: ModelContext): Promise<true | ApiError> {
  // Made only when needed: a listing asks once per row.
  const denied = () => authError(403, 'Insufficient permission for this record');
  if (model.ownerOnly) return owns(model, row, ctx.viewer, kind) || denied();
  if (kind === 'read' && model.exposure.publicRead) return true;
  const check = model.checks?.[kind];
  if (!check) return owns(model, row, ctx.viewer, kind) || ctx.viewer.current_user_permission >= STAFF || denied();
  try {
    return (await check(row, ctx)) !== false || denied();
  } catch (e) {
    // A check's own authentication error is the refusal, message and all.
    if (isApiError(e) && e.errortype === 'AuthenticationError') return e;
    throw e;
  }
}

/** Single reads and writes: refuse with the check's error (403 AuthenticationError). */
export async function authorizeRecord(model: Model, row: Row, kind: 'read' | 'write', ctx: ModelContext): Promise<void> {
  const decision = await recordDecision(model, row, kind, ctx);
  if (decision !== true) throw decision;
}

/** Collection reads skip denied rows. */
export async function recordAllowed(model: Model, row: Row, kind: 'read' | 'write', ctx: ModelContext): Promise<boolean> {
  return (await recordDecision(model, row, kind, ctx)) === true;
}

/**
 * How a collection is scoped before counting: everything (public read, or staff on an ordinary model),
 * the caller's own rows (owner filter), or nothing (a non-staff caller on an owner-less model).
 */
export type Scope = { kind: 'all' } | { kind: 'owner'; columns: string[]; userId: number } | { kind: 'none' };

export function collectionScope(model: Model, viewer: RecordViewer): Scope {
  const ownerFilter = (): Scope =>
    model.owner && viewer.current_user_id !== null ? { kind: 'owner', columns: userColumns(model, 'read'), userId: viewer.current_user_id } : { kind: 'none' };
  if (model.ownerOnly) return ownerFilter();
  if (model.exposure.publicRead) return { kind: 'all' };
  if (viewer.current_user_permission >= STAFF) return { kind: 'all' };
  return ownerFilter();
}
