import cookie from '@fastify/cookie';
import formbody from '@fastify/formbody';
import Fastify, { type FastifyBaseLogger, type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { readFileSync } from 'node:fs';
import type { Services } from '../services.js';
import { authenticateRequest } from '../accounts/auth/authenticate.js';
import { clientErrorHandler } from '../http/client-error.js';
import { failure, serializeApiPayload } from '../http/envelope.js';
import { LOG_SERIALIZERS, RouteOnlyLogController } from '../http/log-lines.js';
import { nulInputRefusal } from '../http/input-text.js';
import { ApiError, authError, isApiError, noEndpoint } from '../http/errors.js';
import '../http/request-context.js';
import '../accounts/auth/request.js';
import type { Feature } from '../http/request-context.js';
import { API_PREFIX, SECURITY_HEADERS, applyCors, checkClientVersion, requireHttps } from '../http/transport.js';
import { registerSurfaces } from '../surfaces/index.js';
import { pluginManagementHandlers } from '../surfaces/management/registry.js';
import type { PluginModule } from '../plugin-kit/contract.js';
import { withinPlugin } from '../plugin-kit/routes.js';
import { pluginModules } from './plugins.js';
import { registerWebSessionRequest } from '../web/request-session.js';
import { webRoutes } from '../web/routes.js';
import { openApiRoutes } from '../openapi/routes.js';

export interface AppOptions {
  /** A pino logger or logger options; false in tests. */
  logger?: boolean | Record<string, unknown> | FastifyBaseLogger;
  /** Extra routes inside the API scope (tests register protected probe routes here). */
  extraApiRoutes?: (api: FastifyInstance, services: Services) => void | Promise<void>;
}

/** Maps anything thrown in the API to the contract's vocabulary; unknown errors become a 500 with a reference. */
function toApiError(error: unknown, request: FastifyRequest): ApiError {
  if (isApiError(error)) return error;
  const fe = error as FastifyError;
  if (typeof fe?.statusCode === 'number' && fe.statusCode >= 400 && fe.statusCode < 500) {
    if (fe.statusCode === 413) return new ApiError(413, 'TransactionError', 'Request body is too large');
    if (fe.statusCode === 415) return new ApiError(415, 'TransactionError', 'Unsupported content type');
    return new ApiError(400, 'TransactionError', 'Malformed request');
  }
  request.log.error({ err: error, reqId: request.id }, 'unexpected error');
  return new ApiError(500, 'TransactionError', `Internal error (ref ${request.id})`);
}

/** The error envelope for `err` with its status and headers; the request log reads the errortype. */
function sendError(reply: FastifyReply, err: ApiError): FastifyReply {
  reply.errortype = err.errortype;
  reply.code(err.status);
  for (const [name, value] of Object.entries(err.headers)) reply.header(name, value);
  return reply.type('application/json; charset=utf-8').send(failure(err));
}

/**
 * The API's front controller. Every request under /api/v1 runs, in order:
 *   1. request id and start time; security headers on every response
 *   2. HTTPS precondition                          (426 SecurityError)
 *   3. CORS, answering preflights for listed origins
 *   4. general rate limit per IP                   (429 RateLimitError)
 *   5. client-version handshake                    (426 UpgradeRequired)
 *   6. special channels: routes with auth 'none' skip step 7; 'surface' routes run it themselves
 *   7. authentication, exactly once               (4xx AuthenticationError)
 *   8. the surface's handler and its authorization contract
 *   9. envelope, and a request-log entry as the answer leaves (buffered)
 */
async function apiPipeline(api: FastifyInstance, services: Services, opts: AppOptions, plugins: readonly PluginModule[]): Promise<void> {
  const { settings, buckets } = services;
  api.setReplySerializer((payload) => serializeApiPayload(payload));

  /**
   * The general bucket counts every request per IP, except signed-in browser sessions: those are metered
   * per user instead, so an office of members behind one address does not share one budget. A request
   * whose cookie names no live signed-in session (a guest, or a stale cookie) is metered by IP as usual.
   */
  async function meter(request: FastifyRequest): Promise<void> {
    const own = request.routeOptions.config.meter;
    if (own) return own(request);
    const h = request.headers;
    const usesKeys = h.public_key !== undefined || h.secret_key !== undefined;
    if (!usesKeys && request.hasWebSessionCookie()) {
      const session = await request.webSession();
      if (session?.userId != null) return buckets.browserSession.consume(`user:${session.userId}`);
    }
    // A key-authenticated request reads its failed-auth window in the same store round trip.
    if (usesKeys) request.failedAuthReading = await buckets.general.consumeAndRead(request.ip, buckets.failedAuth, request.ip);
    else await buckets.general.consume(request.ip);
  }

  api.addHook('onRequest', async (request, reply) => {
    request.startedAt = performance.now();
    reply.headers(SECURITY_HEADERS);
    reply.header('x-request-id', request.id);
    requireHttps(request, settings);
    if (applyCors(request, reply, settings)) return reply;
    await meter(request);
    checkClientVersion(request, settings);
    const plugin = request.routeOptions.config.plugin;
    if (plugin !== undefined && !services.plugins.isActive(plugin)) throw noEndpoint(request);
    const auth = request.routeOptions.config.auth ?? 'required';
    if (auth === 'required' && !request.is404) {
      const principal = await request.authenticate();
      if (principal.credential === 'guest') throw authError(401, 'Sign in required');
    }
    return undefined;
  });

  // Logged as the answer leaves (status and errortype are final by then). An onResponse hook would cost
  // every request a stream-finish listener, about a tenth of an unauthenticated 404's server time.
  api.addHook('onSend', (request, reply, payload, done) => {
    const status = reply.statusCode;
    const principal = request.principal;
    services.requestLog.add({
      feature: request.routeOptions.config.feature ?? 'unknown',
      action: request.logAction,
      ip: request.ip,
      userId: principal?.user?.usr_user_id ?? null,
      keyType: principal?.apiKey?.apk_type ?? (principal ? principal.credential : null),
      success: status < 400,
      status,
      errorType: reply.errortype,
      responseMs: performance.now() - request.startedAt,
      at: services.clock.now(),
    });
    done(null, payload);
  });

  api.setErrorHandler((error, request, reply) => {
    reply.headers(SECURITY_HEADERS);
    return sendError(reply, toApiError(error, request));
  });

  // Answered, not thrown: an unknown path is the commonest refusal, and an exception's trip through the
  // error handler cost it about a fifth of its time (A/B on PGlite: 1.30x the requests/s).
  api.setNotFoundHandler((request, reply) => sendError(reply, noEndpoint(request)));

  await registerSurfaces(api, services, {
    management: pluginManagementHandlers(plugins),
    // A plugin's routes are marked with its name: while it is inactive they answer as unknown paths.
    async registerRoutes(scope) {
      for (const plugin of plugins) {
        const routes = plugin.apiRoutes;
        if (routes) await scope.register(async (own) => routes(withinPlugin(own, plugin.name), services));
      }
    },
  });
  await opts.extraApiRoutes?.(api, services);
}

function httpsOptions(services: Services): { key: Buffer; cert: Buffer } | undefined {
  const { tlsCertFile, tlsKeyFile } = services.config;
  if (!tlsCertFile || !tlsKeyFile) return undefined;
  return { cert: readFileSync(tlsCertFile), key: readFileSync(tlsKeyFile) };
}

/** A request the router could not take apart (FST_ERR_BAD_URL and the like): 400, in the envelope on the API. */
function malformedUrlHandler(_error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  reply.headers(SECURITY_HEADERS).code(400);
  const path = request.raw.url ?? '';
  if (path === API_PREFIX || path.startsWith(`${API_PREFIX}/`) || path.startsWith(`${API_PREFIX}?`)) {
    void reply.type('application/json; charset=utf-8').send(JSON.stringify(failure(new ApiError(400, 'TransactionError', 'Malformed request URL'))));
  } else {
    void reply.type('text/plain; charset=utf-8').send('Bad request: malformed URL');
  }
}

/**
 * Fastify's logger option, whichever form it was given in: every line serializes a request as its route
 * pattern (LOG_SERIALIZERS), over the caller's own serializers, so no URL (and no token in one) is logged.
 */
function loggerOption(given: AppOptions['logger']): { logger: boolean | Record<string, unknown> } | { loggerInstance: FastifyBaseLogger } {
  if (given === undefined || given === false) return { logger: false };
  if (given === true) return { logger: { serializers: LOG_SERIALIZERS } };
  if ('info' in (given as object)) return { loggerInstance: (given as FastifyBaseLogger).child({}, { serializers: LOG_SERIALIZERS }) };
  const options = given as Record<string, unknown>;
  return { logger: { ...options, serializers: { ...(options.serializers as object | undefined), ...LOG_SERIALIZERS } } };
}

export async function buildApp(services: Services, opts: AppOptions = {}): Promise<FastifyInstance> {
  const https = httpsOptions(services);
  const trustProxy = services.config.trustProxy.length > 0 ? services.config.trustProxy : false;
  const logger = loggerOption(opts.logger);
  const app = (Fastify as unknown as (o: Record<string, unknown>) => FastifyInstance)({
    ...logger,
    logController: new RouteOnlyLogController(),
    trustProxy,
    ...(https ? { https } : {}),
    bodyLimit: 1024 * 1024,
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 200 },
    requestIdHeader: false,
    // Requests Node's HTTP parser refuses before Fastify sees them (431, 400) are answered in the envelope.
    clientErrorHandler: clientErrorHandler(API_PREFIX),
    // Requests Fastify's router refuses (a URL whose percent-escapes do not decode): the envelope too.
    frameworkErrors: malformedUrlHandler,
  });

  app.decorateRequest('startedAt', 0);
  app.decorateRequest('principal', null);
  app.decorateRequest('logAction', null);
  app.decorateRequest('failedAuthReading', null);
  app.decorateRequest('authenticate', function (this: FastifyRequest) {
    return authenticateRequest(services, this);
  });
  app.decorateReply('errortype', null);
  // A settings or plugin-flag change another process made is being reloaded (its notification came):
  // the request waits, so that it sees the change.
  app.addHook('onRequest', (_request, _reply, done) => {
    const settling = services.caches.settling();
    if (settling === undefined) done();
    else settling.then(() => done(), () => done());
  });
  // One input rule on every route, once the body is parsed: no NUL character in any text sent (the
  // database refuses it; here it is bad input, not a 500). Actions check their body at validation.
  app.addHook('preValidation', (request, _reply, done) => done(nulInputRefusal(request) ?? undefined));
  await app.register(cookie);
  await app.register(formbody);
  registerWebSessionRequest(app, services, API_PREFIX);
  const plugins = await pluginModules();
  await app.register((api) => apiPipeline(api, services, opts, plugins), { prefix: API_PREFIX });
  await app.register((docs) => openApiRoutes(docs, services, plugins));
  await app.register((web) => webRoutes(web, services, plugins));
  return app;
}

export type { Feature };
