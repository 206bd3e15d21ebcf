import formbody from '@fastify/formbody';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import { isUniqueViolation } from '../../db/errors.js';
import type { DB } from '../../db/types.js';
import type { Model, ModelContext, Row } from '../../models/define.js';
import { models } from '../../models/index.js';
import { requireCapability } from '../../accounts/auth/capabilities.js';
import { success } from '../../http/envelope.js';
import { authError, isApiError, noEndpoint, transactionError } from '../../http/errors.js';
import type { Services } from '../../services.js';
import { authorizeRecord, collectionScope, recordAllowed } from './authorize.js';
import { requireCreateFields, sanitizeInput } from './coerce.js';
import { TierGate } from '../../models/gate.js';
import { STAFF_PERMISSION } from '../../tiers/gating.js';
import { exportRow } from './export.js';
import { deleteRow, insertAndReturnRow, loadCollection, loadRow, parseCollectionParams, updateRow, type RowReader } from './query.js';
import { stampTimes, updateRecord } from './write.js';

type Verb = 'read' | 'write';
interface ItemParams { id: string }

/**
 * GET, POST, PUT and DELETE over the model registry (the contract's CRUD endpoints). Each handler reads
 * top to bottom: resolve the class for the verb (404), authenticate, the key's capability (403), the row and the
 * per-record check (400 not found, 403 denied), input through the allowlist and coercion (400), then
 * the write in one transaction and the export.
 */
export async function crudSurface(api: FastifyInstance, services: Services): Promise<void> {
  const { db, clock, settings, plugins, modelCaches: caches } = services;

  /** Class not exposed for the verb, plugin inactive: the same 404 as a path that names no class. */
  function resource(request: FastifyRequest, className: string, verb: Verb): Model {
    const model = models.resource(className, plugins);
    const exposed = verb === 'read' ? model?.exposure.readable : model?.exposure.writable;
    if (!model || !exposed) throw noEndpoint(request);
    return model;
  }

  /**
   * Authentication runs after the class resolves, so an unknown class is a 404 like any unknown path. A
   * model written by staff only (exposure.writableBy) is, to anyone else, a class not exposed for the
   * verb: the same 404, before the key's capability is looked at.
   */
  async function context(request: FastifyRequest, model: Model, capability: 'read' | 'write' | 'delete'): Promise<ModelContext> {
    const principal = await request.authenticate();
    if (!principal.user) throw authError(401, 'Authentication required');
    if (capability !== 'read' && model.exposure.writableBy === 'staff' && principal.user.usr_permission < STAFF_PERMISSION) throw noEndpoint(request);
    requireCapability(principal, capability);
    const viewer = { current_user_id: principal.user.usr_user_id, current_user_permission: principal.user.usr_permission };
    const tierReader = services.tiers.readerFor(request);
    const tierGate = new TierGate(db, settings, clock, { userId: viewer.current_user_id, permission: viewer.current_user_permission }, caches, (userId) => tierReader.getUserTier(userId));
    return { db, clock, settings, viewer, featureRegistry: services.tiers.registry, tierGate, caches };
  }

  /** Whose is-viewable check a read applies: none for staff, who see every row. */
  async function rowReader(model: Model, ctx: ModelContext): Promise<RowReader | undefined> {
    if (!model.viewable || ctx.viewer.current_user_permission >= STAFF_PERMISSION) return undefined;
    return { viewer: ctx.viewer, tierLevel: await ctx.tierGate!.viewerLevel(), now: clock.now() };
  }

  function parseId(model: Model, raw: string): number {
    if (!/^\d{1,15}$/.test(raw) || Number(raw) < 1) throw transactionError(`${model.className} not found`);
    return Number(raw);
  }

  /** Database refusals of a write (constraints, bad data) are save errors, not server faults. */
  async function saving<T>(work: (trx: Kysely<DB>) => Promise<T>): Promise<T> {
    try {
      return await db.transaction().execute(work);
    } catch (e) {
      if (isApiError(e)) throw e;
      const code = String((e as { code?: unknown }).code ?? '');
      if (isUniqueViolation(e)) throw transactionError('Save failed: a conflicting record exists');
      if (code === '23503') throw transactionError('Save failed: a referenced record does not exist');
      if (code.startsWith('23')) throw transactionError('Save failed: a required value is missing or not allowed');
      if (code.startsWith('22')) throw transactionError('Save failed: a value is out of range or malformed');
      throw e;
    }
  }

  const config = { feature: 'crud' as const, auth: 'surface' as const };

  async function readOne(request: FastifyRequest<{ Params: ItemParams }>, className: string) {
    const model = resource(request, className, 'read');
    request.logAction = `${model.className}:read`;
    const ctx = await context(request, model, 'read');
    // Soft delete, then the is-viewable check (a row the reader may not see is not found), then the
    // per-record check; tier gating, the last check, shapes the export.
    const row = await loadRow(db, model, parseId(model, request.params.id), false, await rowReader(model, ctx), caches);
    if (!row) throw transactionError(`${model.className} not found`);
    await authorizeRecord(model, row, 'read', ctx);
    return success(await exportRow(model, row, ctx), `${model.className} found.`);
  }

  async function readMany(request: FastifyRequest<{ Querystring: Record<string, unknown> }>, className: string) {
    const model = resource(request, className, 'read');
    request.logAction = `${model.className}:list`;
    const ctx = await context(request, model, 'read');
    const params = parseCollectionParams(model, request.query ?? {});
    const staff = ctx.viewer.current_user_permission >= STAFF_PERMISSION;
    params.reader = await rowReader(model, ctx);
    // With tier_gate_hide_from_listings, rows the viewer cannot open are not listed (nor counted).
    if (model.gate && !staff && settings.bool('tier_gate_hide_from_listings')) {
      params.openRowsFor = { level: await ctx.tierGate!.viewerLevel(), now: clock.now() };
    }
    const { total, rows } = await loadCollection(db, model, collectionScope(model, ctx.viewer), params, caches);
    const data: Row[] = [];
    for (const row of rows) if (await recordAllowed(model, row, 'read', ctx)) data.push(await exportRow(model, row, ctx));
    return success(data, '', { num_results: total, page: params.page, numperpage: params.numperpage });
  }

  async function create(request: FastifyRequest, className: string) {
    const model = resource(request, className, 'write');
    request.logAction = `${model.className}:create`;
    const ctx = await context(request, model, 'write');
    const values = sanitizeInput(model, formFields(request));
    // The owner is the caller, whatever the input says (the user model owns itself: nothing to stamp).
    if (model.owner && model.owner !== model.primaryKey) values[model.owner] = ctx.viewer.current_user_id;
    requireCreateFields(model, values);
    await authorizeRecord(model, values, 'write', ctx);
    const row = await saving(async (trx) => {
      stampTimes(model, values, clock.now(), true);
      const created = model.createNew ? await loadRow(trx, model, await model.createNew(values, { ...ctx, trx })) : await insertAndReturnRow(trx, model, values);
      if (created) await model.afterWrite?.({ op: 'create', id: Number(created[model.primaryKey]), before: null, after: created }, { ...ctx, trx });
      return created;
    });
    if (!row) throw transactionError(`${model.className} not found`);
    return success(await exportRow(model, row, ctx), `New ${model.className} successful.`);
  }

  async function update(request: FastifyRequest<{ Params: ItemParams; Querystring: Record<string, unknown> }>, className: string) {
    const model = resource(request, className, 'write');
    request.logAction = `${model.className}:update`;
    const ctx = await context(request, model, 'write');
    // The fields are the query string's; a body, when sent, must be a form all the same.
    formFields(request);
    const id = parseId(model, request.params.id);
    const row = await saving(async (trx) => {
      const stored = await loadRow(trx, model, id, true);
      if (!stored) throw transactionError(`${model.className} not found`);
      // Authorised as stored, before any input is looked at.
      await authorizeRecord(model, stored, 'write', ctx);
      const changes = sanitizeInput(model, request.query ?? {});
      await updateRecord(trx, model, id, stored, changes, ctx);
      return loadRow(trx, model, id);
    });
    return success(await exportRow(model, row!, ctx), `${model.className} update successful.`);
  }

  async function remove(request: FastifyRequest<{ Params: ItemParams }>, className: string) {
    const model = resource(request, className, 'write');
    request.logAction = `${model.className}:delete`;
    const ctx = await context(request, model, 'delete');
    const id = parseId(model, request.params.id);
    const deleteColumn = model.deleteColumn;
    if (!deleteColumn && !model.deleteRemovesRow) throw noEndpoint(request);
    const row = await saving(async (trx) => {
      const stored = await loadRow(trx, model, id, true);
      if (!stored) throw transactionError(`${model.className} not found`);
      await authorizeRecord(model, stored, 'write', ctx);
      if (!deleteColumn) {
        await deleteRow(trx, model, id);
        await model.afterWrite?.({ op: 'delete', id, before: stored, after: stored }, { ...ctx, trx });
        return stored;
      }
      const changes: Row = { [deleteColumn]: clock.now() };
      stampTimes(model, changes, clock.now(), false);
      await updateRow(trx, model, id, changes);
      await model.afterWrite?.({ op: 'delete', id, before: stored, after: { ...stored, ...changes } }, { ...ctx, trx });
      return { ...stored, ...changes };
    });
    return success(await exportRow(model, row, ctx), 'Deletion successful.');
  }

  // One route per declared class and verb (its plugin's state and the class's exposure are checked per
  // request): a path that names no class never enters a handler, and gets the API's not-found answer.
  // The collection path is the class name plus one 's' (Address → Addresss).
  await api.register(async (scope) => {
    await formBodiesOnly(scope);
    for (const { className } of models.all()) {
      scope.get<{ Params: ItemParams }>(`/${className}/:id`, { config }, (request) => readOne(request, className));
      scope.get<{ Querystring: Record<string, unknown> }>(`/${className}s`, { config }, (request) => readMany(request, className));
      scope.post(`/${className}`, { config }, (request) => create(request, className));
      scope.put<{ Params: ItemParams; Querystring: Record<string, unknown> }>(`/${className}/:id`, { config }, (request) => update(request, className));
      scope.delete<{ Params: ItemParams }>(`/${className}/:id`, { config }, (request) => remove(request, className));
    }
  });
}

/** What a CRUD route's body parses to when it is not form-urlencoded: refused by formFields, after authentication. */
const NOT_A_FORM = Symbol('not form-urlencoded');

/**
 * CRUD writes take form-urlencoded fields (the contract's CRUD table): in this scope only that type is
 * parsed, and any other body (JSON, text, multipart, untyped bytes) is left unread and marked, so the
 * handler refuses it with 400 instead of writing a row without its fields.
 */
async function formBodiesOnly(scope: FastifyInstance): Promise<void> {
  scope.removeAllContentTypeParsers();
  await scope.register(formbody);
  scope.addContentTypeParser('*', (_request, _payload, done) => done(null, NOT_A_FORM));
}

/** The form fields of a CRUD write's body: none when it has no body, 400 TransactionError when it is not a form. */
function formFields(request: FastifyRequest): Record<string, unknown> {
  const body = request.body;
  if (body === NOT_A_FORM) {
    throw transactionError('CRUD writes take application/x-www-form-urlencoded fields (PUT: as query string parameters); this body is not a form');
  }
  return body && typeof body === 'object' ? (body as Record<string, unknown>) : {};
}
