import { LogController, type FastifyReply, type FastifyRequest } from 'fastify';

/**
 * What a log line says about a request: the method, the route pattern it matched (Fastify's
 * routeOptions.url, e.g. /api/v1/auth/device_link/:poll_token) and the client address. Never the URL: its
 * path and query carry device-link poll tokens, upload tokens, share-link and bridge tokens. A request that
 * matched no route (a 404) names no path at all.
 */
export function requestForLog(request: FastifyRequest): { method: string; route: string | null; remoteAddress: string } {
  return { method: request.method, route: routePattern(request), remoteAddress: request.ip };
}

/** The route pattern a request matched, or null for one that matched none (the not-found handlers' catch-all). */
export function routePattern(request: FastifyRequest): string | null {
  const url = request.routeOptions?.url;
  return url === undefined || request.is404 ? null : url;
}

/** The logger's serializers: a request as above, a reply as its status. Headers and bodies never. */
export const LOG_SERIALIZERS = {
  req: requestForLog,
  res: (reply: FastifyReply) => ({ statusCode: reply.statusCode }),
};

/**
 * Fastify's own lines about a request, with the raw URL left out of the one that carried it. A request is
 * one line at info, as its answer leaves: `request completed` names the request (method, route pattern,
 * client address), the status and the time taken. The `incoming request` line is debug: at `npm start`'s
 * level (info) a second line per request cost a cached read about a tenth of its rate, for nothing the
 * completed line does not say (the contract's request log is the database record, written either way).
 */
export class RouteOnlyLogController extends LogController {
  override incomingRequest(request: FastifyRequest): void {
    if (this.isLogDisabled(request)) return;
    request.log.debug({ req: request }, 'incoming request');
  }

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (this.isLogDisabled(request)) return;
    if (error) reply.log.error({ req: request, res: reply, err: error, responseTime: reply.elapsedTime }, 'request errored');
    else reply.log.info({ req: request, res: reply, responseTime: reply.elapsedTime }, 'request completed');
  }

  override routeNotFound(request: FastifyRequest): void {
    if (this.isLogDisabled(request)) return;
    request.log.info(`Route ${request.method} not found`);
  }
}
