import type { PluginState } from '../actions/registry.js';
import type { Model } from '../models/define.js';
import { models } from '../models/index.js';
import { readableColumns, writableColumns } from '../surfaces/crud/fields.js';
import { MAX_NUMPERPAGE } from '../surfaces/crud/query.js';
import { SECURITY, type DocumentBuilder } from './builder.js';
import { ERROR_ROWS } from './errors.js';
import { columnReadSchema, columnWriteSchema, type JsonSchema } from './json-schema.js';

/** A row as the model exports it: the readable columns (all of them always present) plus the derived keys. */
function exportSchema(model: Model): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  for (const name of readableColumns(model)) properties[name] = columnReadSchema(model.columns[name]!);
  for (const key of model.exposure.derived ?? []) properties[key] = { description: 'derived field' };
  const required = Object.keys(properties);
  return { type: 'object', properties, required, additionalProperties: false, 'x-primary-key': model.primaryKey };
}

/** The fields CRUD input may set; anything else is silently dropped. */
function inputSchema(model: Model): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const name of writableColumns(model)) {
    const spec = model.columns[name]!;
    properties[name] = columnWriteSchema(spec);
    if (spec.required) required.push(name);
  }
  return { type: 'object', properties, ...(required.length > 0 ? { required } : {}) };
}

const idParameter = { name: 'id', in: 'path', required: true, schema: { type: 'integer', minimum: 1 } };
const readErrors = [...ERROR_ROWS.transport, ...ERROR_ROWS.authentication, ...ERROR_ROWS.crud];
const writeErrors = [...readErrors, ...ERROR_ROWS.body];

/** GET/POST/PUT/DELETE for every class exposed for the verb (plugin models while their plugin is active). */
export function addCrud(doc: DocumentBuilder, plugins: PluginState): void {
  for (const model of models.all()) {
    const C = model.className;
    if (!models.resource(C, plugins) || !(model.exposure.readable || model.exposure.writable)) continue;
    const tags = [model.plugin ? `Plugin: ${model.plugin}` : 'CRUD'];
    const row = doc.schema(C, exportSchema(model));
    const notes = [
      model.exposure.publicRead ? 'World-readable (api_public_read).' : model.ownerOnly ? "Owner-only, even for staff." : 'Per-record scope: the owner, or staff (usr_permission 5+).',
      model.exposure.writableBy === 'staff' ? 'Written over CRUD by staff only; to others the write verbs answer 404.' : '',
    ].filter(Boolean).join(' ');
    const ext = { 'x-model': { class: C, table: model.table, plugin: model.plugin ?? null, readable: model.exposure.readable, writable: model.exposure.writable } };

    if (model.exposure.readable) {
      doc.add(`/${C}/{id}`, 'get', {
        operationId: `get${C}`, tags, summary: `Read one ${C}`, description: notes, security: SECURITY.keysOrBrowser, parameters: [idParameter],
        responses: { 200: doc.success(`${C} found.`, row), ...doc.errors(readErrors) }, ...ext,
      });
      const sortable = readableColumns(model).flatMap((c) => [c, c.slice(model.prefix.length + 1)]);
      doc.add(`/${C}s`, 'get', {
        operationId: `list${C}s`, tags, summary: `List ${C} rows`, description: notes, security: SECURITY.keysOrBrowser,
        parameters: [
          { name: 'page', in: 'query', schema: { type: 'integer', minimum: 0, default: 0 } },
          { name: 'numperpage', in: 'query', schema: { type: 'integer', minimum: 1, maximum: MAX_NUMPERPAGE, default: 3 } },
          { name: 'sort', in: 'query', schema: { type: 'string', enum: sortable }, description: 'a declared column, with or without the table prefix' },
          { name: 'sdirection', in: 'query', schema: { type: 'string', enum: ['ASC', 'DESC'], default: 'ASC' } },
          ...Object.keys(model.filters ?? {}).map((name) => ({ name, in: 'query', schema: { type: 'string' }, description: 'declared collection filter' })),
        ],
        responses: { 200: doc.success('The page of rows', { type: 'array', items: row }, 'CollectionEnvelope'), ...doc.errors(readErrors) }, ...ext,
      });
    }
    if (!model.exposure.writable) continue;
    const input = doc.schema(`${C}Input`, inputSchema(model));
    doc.add(`/${C}`, 'post', {
      operationId: `create${C}`, tags, summary: `Create a ${C}`, description: `${notes} Unwritable fields are silently dropped; the owner is the caller.`,
      security: SECURITY.keysOrBrowser,
      // Form-urlencoded only: any other body is refused with 400 (the contract's CRUD table).
      requestBody: { required: true, content: { 'application/x-www-form-urlencoded': { schema: input } } },
      responses: { 200: doc.success(`New ${C} successful.`, row), ...doc.errors(writeErrors) }, ...ext,
    });
    const writable = [...writableColumns(model)];
    doc.add(`/${C}/{id}`, 'put', {
      operationId: `update${C}`, tags, summary: `Update a ${C}`, description: `${notes} The fields to change are query string parameters.`,
      security: SECURITY.keysOrBrowser,
      parameters: [idParameter, ...writable.map((name) => ({ name, in: 'query', required: false, schema: columnWriteSchema(model.columns[name]!) }))],
      responses: { 200: doc.success(`${C} update successful.`, row), ...doc.errors(writeErrors) }, ...ext,
    });
    if (model.deleteColumn || model.deleteRemovesRow) {
      doc.add(`/${C}/{id}`, 'delete', {
        operationId: `delete${C}`, tags, summary: model.deleteColumn ? `Soft-delete a ${C}` : `Delete a ${C}`, description: notes, security: SECURITY.keysOrBrowser, parameters: [idParameter],
        responses: { 200: doc.success('Deletion successful.', row), ...doc.errors(readErrors) }, ...ext,
      });
    }
  }
}
