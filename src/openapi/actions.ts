import { SURFACE_AUTH_DEFAULTS, resolveAuthContract } from '../actions/auth-contract.js';
import type { Action } from '../actions/define.js';
import { actionRegistry } from '../actions/index.js';
import { pluginOf, type PluginState } from '../actions/registry.js';
import { SECURITY, ref, type DocumentBuilder } from './builder.js';
import { ERROR_ROWS, type ErrorRow } from './errors.js';
import { inputObjectSchema } from './json-schema.js';

/** Who may call the action: no credential, a browser session only, a machine key, or any credential. */
function securityOf(action: Action, surface: 'action' | 'form') {
  const d = action.descriptor;
  if (!d.requires_session) return d.auth.requires_browser_session ? SECURITY.browser : SECURITY.none;
  const auth = resolveAuthContract(d.auth, SURFACE_AUTH_DEFAULTS[surface]);
  if (auth.requires_browser_session) return SECURITY.browser;
  if (auth.requires_machine_key) return SECURITY.keys;
  return SECURITY.keysOrBrowser;
}

function errorRows(action: Action, surface: 'action' | 'form'): ErrorRow[] {
  const d = action.descriptor;
  const credential = d.requires_session || d.auth.requires_browser_session;
  return [
    ...ERROR_ROWS.transport,
    ...(surface === 'action' ? [...ERROR_ROWS.body, ...ERROR_ROWS.action] : ERROR_ROWS.form),
    ...(d.requires_setting ? ERROR_ROWS.requiresSetting : []),
    // Sessionless actions check secrets of their own (reset codes, passwords) with the same vocabulary.
    ...(credential || surface === 'action' ? ERROR_ROWS.authentication : []),
  ];
}

/** The descriptor as published, with the auth block resolved against the surface's defaults. */
function descriptorExtension(action: Action) {
  const d = action.descriptor;
  return {
    requires_session: d.requires_session,
    requires_setting: d.requires_setting,
    mutates: d.mutates,
    accepts_files: d.accepts_files,
    has_form: action.form !== null,
    plugin: pluginOf(action),
    auth: resolveAuthContract(d.auth, SURFACE_AUTH_DEFAULTS.action),
  };
}

function describe(action: Action): string {
  const d = action.descriptor;
  const notes = [d.description];
  if (d.requires_setting) notes.push(`Exists only while setting \`${d.requires_setting}\` is on (otherwise 403 ActionError, before authentication).`);
  if (!d.requires_session) notes.push(d.auth.requires_browser_session ? 'Sessionless, for website visitors: browser session (signed in or not) with its CSRF header.' : 'Sessionless: no credential needed.');
  if (d.mutates) notes.push('Changes state; send an Idempotency-Key to retry safely.');
  return notes.join('\n\n');
}

const operationName = (name: string) => name.replace('/', '__');

/** POST /action/{name} (and GET /form/{name}) for every action reachable with these plugins. */
export function addActions(doc: DocumentBuilder, plugins: PluginState): void {
  const discovery = { type: 'object', additionalProperties: { type: 'object', required: ['description', 'requires_session', 'input', 'has_form'], properties: {
    description: { type: 'string' },
    requires_session: { type: 'boolean' },
    input: { type: ['object', 'null'], additionalProperties: true },
    has_form: { type: 'boolean' },
  } } };
  doc.add('/actions', 'get', {
    operationId: 'listActions',
    tags: ['Actions'],
    summary: 'Action discovery: every published action by name',
    security: SECURITY.none,
    responses: { 200: doc.success('The published actions', discovery), ...doc.errors(ERROR_ROWS.transport) },
  });

  for (const action of actionRegistry.available(plugins)) {
    const d = action.descriptor;
    const tag = pluginOf(action) ? `Plugin: ${pluginOf(action)}` : 'Actions';
    const input = doc.schema(`${operationName(action.name)}_input`, inputObjectSchema(d.input));
    const required = Object.values(d.input ?? {}).some((f) => f.required);
    const content: Record<string, unknown> = { 'application/json': { schema: input }, 'application/x-www-form-urlencoded': { schema: input } };
    if (d.accepts_files) {
      content['multipart/form-data'] = {
        schema: { allOf: [input], properties: { 'attachments[]': { type: 'array', items: { type: 'string', contentMediaType: 'application/octet-stream' } } } },
      };
    }
    doc.add(`/action/${action.name}`, 'post', {
      operationId: `action_${operationName(action.name)}`,
      tags: [tag],
      summary: d.description,
      description: describe(action),
      security: securityOf(action, 'action'),
      parameters: [ref('parameters', 'IdempotencyKey')],
      requestBody: { required, content },
      responses: { 200: doc.success('The action succeeded; data keys are defined per action', { type: ['object', 'array'], additionalProperties: true }), ...doc.errors(errorRows(action, 'action')) },
      'x-action': descriptorExtension(action),
    });
    if (action.form) {
      doc.add(`/form/${action.name}`, 'get', {
        operationId: `form_${operationName(action.name)}`,
        tags: ['Forms'],
        summary: `The form definition of ${action.name}`,
        security: securityOf(action, 'form'),
        responses: { 200: doc.success('The form definition', ref('schemas', 'FormDefinition')), ...doc.errors(errorRows(action, 'form')) },
      });
    }
  }
  doc.schema('FormDefinition', {
    type: 'object',
    required: ['schema_version', 'form', 'fields'],
    properties: {
      schema_version: { const: 1 },
      form: { type: 'object', required: ['name', 'submit_to', 'submit_label'], properties: { name: { type: 'string' }, submit_to: { type: 'string' }, submit_label: { type: 'string' } } },
      fields: { type: 'array', items: { type: 'object', required: ['type', 'name'], properties: { type: { type: 'string' }, name: { type: 'string' }, label: { type: ['string', 'null'] } } } },
    },
  });
}
