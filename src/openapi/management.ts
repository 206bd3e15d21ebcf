import { effectiveAuth } from '../surfaces/management/define.js';
import type { PluginState } from '../actions/registry.js';
import { availableManagementHandlers, type PluginManagementHandler } from '../surfaces/management/registry.js';
import { SECURITY, type DocumentBuilder } from './builder.js';
import { ERROR_ROWS } from './errors.js';

const errors = [...ERROR_ROWS.transport, ...ERROR_ROWS.authentication, ...ERROR_ROWS.management];
const queryErrors = [...errors, { status: 400, errortype: 'TransactionError' as const, meaning: 'a query parameter is missing or invalid (data.field may name it)' }];

/** GET /management/{path} for every management handler (plugins' while active): machine keys of superadmins, read-only. */
export function addManagement(doc: DocumentBuilder, plugins: PluginState, pluginHandlers: readonly PluginManagementHandler[]): void {
  for (const handler of availableManagementHandlers(plugins, pluginHandlers)) {
    const auth = effectiveAuth(handler);
    const path = handler.path === '' ? '/management' : `/management/${handler.path}`;
    const ok = handler.streams
      ? { description: 'The bytes, with no envelope', content: { [handler.streams]: { schema: { type: 'string', contentMediaType: handler.streams } } } }
      : doc.success(handler.description, { type: 'object', additionalProperties: true });
    doc.add(path, 'get', {
      operationId: `management_${handler.path.replace(/\//g, '_') || 'index'}`,
      tags: ['Management'],
      summary: handler.description,
      description: `Machine key whose owner has usr_permission ${auth.min_user_permission} or more${auth.capability ? `, capability ${auth.capability}` : ''}; session keys and browser sessions get 403.`,
      security: SECURITY.keys,
      parameters: Object.entries(handler.query ?? {}).map(([name, q]) => ({ name, in: 'query', required: q.required ?? false, schema: { type: q.type }, description: q.description })),
      responses: { 200: ok, ...doc.errors(handler.query ? queryErrors : errors) },
      'x-management-auth': auth,
    });
  }
}
