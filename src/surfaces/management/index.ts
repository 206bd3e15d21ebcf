import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { requireCapability } from '../../accounts/auth/capabilities.js';
import type { Principal } from '../../accounts/auth/principal.js';
import { success } from '../../http/envelope.js';
import { ApiError, authError, notFound } from '../../http/errors.js';
import type { Services } from '../../services.js';
import { MANAGEMENT_DEFAULT_AUTH, effectiveAuth, type EffectiveManagementAuth, type ManagementRequest, type StreamOptions } from './define.js';
import { availableManagementHandlers, findManagementHandler, type PluginManagementHandler } from './registry.js';

/** Headers that carry credentials; a handler never sees them. */
const CREDENTIAL_HEADERS = new Set(['public_key', 'secret_key', 'cookie', 'authorization', 'x-service-csrf']);

/**
 * The management authorization contract against a principal: a machine key (session keys and browser
 * sessions are refused even for superadmins) whose owner meets the permission floor. apk_permission is
 * not a gate unless a handler tightens with a capability. Throws 403 AuthenticationError.
 */
export function enforceManagementAuth(principal: Principal, auth: EffectiveManagementAuth): void {
  if (principal.credential !== 'machine' || principal.apiKey === null) {
    throw authError(403, 'Management requires a machine key; session keys and browser sessions are refused');
  }
  if (principal.user === null || principal.user.usr_permission < auth.min_user_permission) {
    throw authError(403, `Management requires a key whose owner has permission ${auth.min_user_permission} or more`);
  }
  requireCapability(principal, auth.capability);
}

/** The endpoint path below /management: no leading or trailing slashes. */
function endpointPath(request: FastifyRequest): string {
  const wildcard = (request.params as Record<string, string | undefined>)['*'] ?? '';
  return wildcard.replace(/^\/+|\/+$/g, '');
}

function handlerHeaders(request: FastifyRequest): ManagementRequest['headers'] {
  const out: ManagementRequest['headers'] = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (!CREDENTIAL_HEADERS.has(name.toLowerCase())) out[name] = value;
  }
  return out;
}

/**
 * GET /management and /management/*, read-only. Order: both gates (before anything about the endpoint is
 * revealed), then the method (405 ActionError for anything but GET, as the action table answers a wrong
 * method), then resolution (404 NotFound), then the handler's own tightening, then the handler.
 */
export async function managementSurface(api: FastifyInstance, services: Services, pluginHandlers: readonly PluginManagementHandler[]): Promise<void> {
  // Runs right after the front controller's authentication, before the body is even parsed.
  const gates = async (request: FastifyRequest) => {
    const path = endpointPath(request);
    request.logAction = path === '' ? 'management' : `management/${path}`;
    const principal = request.principal ?? (await request.authenticate());
    enforceManagementAuth(principal, MANAGEMENT_DEFAULT_AUTH);
    if (request.method !== 'GET') {
      throw new ApiError(405, 'ActionError', 'Management is read-only: only GET is allowed', { headers: { allow: 'GET' } });
    }
  };

  const handle = async (request: FastifyRequest, reply: FastifyReply) => {
    const path = endpointPath(request);
    const principal = request.principal!;
    const handler = findManagementHandler(path, services.plugins, pluginHandlers);
    if (!handler) throw notFound(`No management endpoint '${path}'`);
    enforceManagementAuth(principal, effectiveAuth(handler));

    let streamed = false;
    const stream = (body: NodeJS.ReadableStream, opts: StreamOptions) => {
      streamed = true;
      reply.code(200).type(opts.contentType);
      if (opts.size !== undefined) reply.header('content-length', String(opts.size));
      if (opts.filename !== undefined) {
        const safe = opts.filename.replace(/[^A-Za-z0-9._-]/g, '_');
        reply.header('content-disposition', `attachment; filename="${safe}"`);
      }
      reply.header('cache-control', 'no-store');
      void reply.send(body);
    };
    const data = await handler.handle(
      { method: 'GET', path, query: { ...(request.query as Record<string, unknown>) }, body: request.body ?? null, headers: handlerHeaders(request) },
      { services, principal, endpoints: availableManagementHandlers(services.plugins, pluginHandlers), stream },
    );
    if (data === null) {
      if (!streamed) throw new Error(`management handler '${path}' returned null without streaming`);
      return reply;
    }
    return success(data);
  };

  const options = { config: { feature: 'management' as const, auth: 'required' as const }, exposeHeadRoute: false, onRequest: gates };
  api.all('/management', options, handle);
  api.all('/management/*', options, handle);
}
