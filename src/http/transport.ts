import type { FastifyReply, FastifyRequest } from 'fastify';
import semver from 'semver';
import type { Settings } from '../settings/store.js';
import { ApiError } from './errors.js';

/** Where the platform API lives: every route of the front controller is under it. */
export const API_PREFIX = '/api/v1';

/** The website session cookie (src/accounts/web-sessions.ts keeps the sessions it names). */
export const SESSION_COOKIE = 'gatehouse_session';
/** The mirror cookie page scripts re-read after a 403 (stale-token recovery). */
export const CSRF_MIRROR_COOKIE = 'service_api_csrf';
/** The header that carries a browser session's CSRF token. */
export const CSRF_HEADER = 'x-service-csrf';

/** How an operator lets the API answer plain HTTP, for local development (the start banner and the site's notice say it). */
export const HTTPS_COMMAND = 'npx gatehouse setting set api_require_https false';

export const SECURITY_HEADERS: Record<string, string> = {
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'x-xss-protection': '1; mode=block',
  'referrer-policy': 'no-referrer',
};

/** Headers a cross-origin caller may send. The browser-session CSRF header is deliberately absent. */
export const CORS_ALLOWED_HEADERS = 'content-type, public_key, secret_key, idempotency-key, client_app, client_version';
const CORS_ALLOWED_METHODS = 'GET, POST, PUT, DELETE, OPTIONS';

export function requireHttps(request: FastifyRequest, settings: Settings): void {
  if (request.protocol !== 'https' && settings.bool('api_require_https')) {
    throw new ApiError(426, 'SecurityError', 'HTTPS is required');
  }
}

function allowedOrigins(settings: Settings): string[] {
  const raw = settings.string('api_allowed_origins');
  return raw === '' ? [] : raw.split(',').map((o) => o.trim().replace(/\/+$/, '')).filter(Boolean);
}

/**
 * Adds CORS headers for a listed origin. Returns true when the request was a preflight that has been
 * answered (the pipeline stops there).
 */
export function applyCors(request: FastifyRequest, reply: FastifyReply, settings: Settings): boolean {
  const origin = request.headers.origin;
  if (typeof origin !== 'string') return false;
  if (!allowedOrigins(settings).includes(origin)) return false;
  reply.header('access-control-allow-origin', origin);
  reply.header('vary', 'Origin');
  const isPreflight = request.method === 'OPTIONS' && request.headers['access-control-request-method'] !== undefined;
  if (!isPreflight) return false;
  reply
    .code(204)
    .header('access-control-allow-methods', CORS_ALLOWED_METHODS)
    .header('access-control-allow-headers', CORS_ALLOWED_HEADERS)
    .header('access-control-max-age', '600')
    .send();
  return true;
}

function headerValue(request: FastifyRequest, name: string): string | undefined {
  const v = request.headers[name];
  return typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined;
}

/**
 * Whether the request presents the browser-session credential: no key headers, the website session cookie
 * and the CSRF header. (Whether the token is right is the authentication stage's business.)
 */
export function presentsBrowserSession(request: FastifyRequest): boolean {
  const h = request.headers;
  return h.public_key === undefined && h.secret_key === undefined && h[CSRF_HEADER] !== undefined && request.hasWebSessionCookie();
}

/**
 * The client-version handshake: a named app with a configured minimum must send a version at least that.
 * Browser-session requests are exempt even when they send client_app (browser-session rule 5): a page is
 * never an outdated app build. The CSRF header is part of that credential, so an app's own key-less calls
 * (auth/login) stay under the handshake even if its cookie jar holds a bridged web session.
 */
export function checkClientVersion(request: FastifyRequest, settings: Settings): void {
  const app = headerValue(request, 'client_app');
  if (app === undefined) return;
  if (presentsBrowserSession(request)) return;
  const minimums = settings.json<Record<string, string>>('api_min_client_versions');
  const minimum = Object.prototype.hasOwnProperty.call(minimums, app) ? minimums[app] : undefined;
  if (minimum === undefined) return;
  const version = headerValue(request, 'client_version');
  const parsed = version === undefined ? null : semver.valid(semver.coerce(version, { includePrerelease: true }) ?? '');
  const exact = version !== undefined && semver.valid(version) ? version : parsed;
  if (exact === null || semver.lt(exact, minimum)) {
    throw new ApiError(426, 'UpgradeRequired', `Client ${app} must be upgraded to version ${minimum} or later`, {
      data: { client_app: app, minimum_version: minimum },
    });
  }
}
