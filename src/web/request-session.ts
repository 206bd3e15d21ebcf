import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '../lib/clock.js';
import type { WebSession, WebSessions } from '../accounts/web-sessions.js';
import { CSRF_MIRROR_COOKIE, SESSION_COOKIE } from '../http/transport.js';

interface RequestSessionState {
  loading?: Promise<WebSession | null>;
  resolved?: WebSession | null;
  replaced?: { cookieValue: string | null; session: WebSession | null };
}

const states = new WeakMap<FastifyRequest, RequestSessionState>();

function state(request: FastifyRequest): RequestSessionState {
  let s = states.get(request);
  if (!s) {
    s = {};
    states.set(request, s);
  }
  return s;
}

/**
 * Cookies are Secure whenever the request came over HTTPS (directly or through a trusted proxy). Plain
 * HTTP is only for development with api_require_https off, where a Secure cookie would never come back.
 */
function cookieOptions(request: FastifyRequest, httpOnly: boolean, maxAgeSeconds?: number) {
  return {
    path: '/',
    httpOnly,
    sameSite: 'lax' as const,
    secure: request.protocol === 'https',
    ...(maxAgeSeconds !== undefined ? { maxAge: maxAgeSeconds } : {}),
  };
}

/**
 * Gives every request `webSession()` (its website session, loaded once) and `useWebSession()` (sign-in and
 * sign-out), and sets the session cookie and the CSRF mirror cookie on every response that has a session.
 * Every website response carries the mirror (DESIGN 8), anonymous visitors included: a route that never
 * looked at the session has it loaded here, and a visitor without one is given a guest session, as every
 * page gives it, so a page script has its CSRF token from the first answer on. An API response mirrors the
 * session its cookie names; a keyed client without a cookie is not handed a session it would never use.
 */
export function registerWebSessionRequest(app: FastifyInstance, services: { webSessions: WebSessions; clock: Clock }, apiPrefix: string): void {
  app.decorateRequest('webSession', function (this: FastifyRequest) {
    const s = state(this);
    if (s.replaced) return Promise.resolve(s.replaced.session);
    s.loading ??= services.webSessions.load(this.cookies[SESSION_COOKIE]).then((session) => {
      s.resolved = session;
      return session;
    });
    return s.loading;
  });
  app.decorateRequest('hasWebSessionCookie', function (this: FastifyRequest) {
    return typeof this.cookies[SESSION_COOKIE] === 'string' && this.cookies[SESSION_COOKIE] !== '';
  });
  app.decorateRequest('useWebSession', function (this: FastifyRequest, cookieValue: string | null, session: WebSession | null) {
    state(this).replaced = { cookieValue, session };
  });

  const isApi = (url: string) => url === apiPrefix || url.startsWith(`${apiPrefix}/`) || url.startsWith(`${apiPrefix}?`);

  /** The session for a response whose route never asked for it (see above); never fails the response. */
  async function sessionForMirror(request: FastifyRequest): Promise<void> {
    const api = isApi(request.url);
    if (api && !request.hasWebSessionCookie()) return;
    try {
      const session = await request.webSession();
      if (session || api) return;
      const created = await services.webSessions.create({ userId: null });
      request.useWebSession(created.cookieValue, created.session);
    } catch (err) {
      request.log.error({ err, reqId: request.id }, 'web session for the CSRF mirror cookie');
    }
  }

  function setCookies(request: FastifyRequest, reply: FastifyReply): void {
    const s = states.get(request);
    if (!s) return;
    if (s.replaced) {
      const { cookieValue, session } = s.replaced;
      if (cookieValue && session) {
        const maxAge = Math.max(0, Math.floor((session.expiresTime.getTime() - services.clock.nowMs()) / 1000));
        reply.setCookie(SESSION_COOKIE, cookieValue, cookieOptions(request, true, maxAge));
      } else {
        reply.clearCookie(SESSION_COOKIE, cookieOptions(request, true));
        reply.clearCookie(CSRF_MIRROR_COOKIE, cookieOptions(request, false));
      }
    }
    const session = s.replaced ? s.replaced.session : s.resolved;
    if (session) reply.setCookie(CSRF_MIRROR_COOKIE, session.csrfToken, cookieOptions(request, false));
  }

  // Callback style, so a keyed API request (no session, no cookie) passes without a promise.
  app.addHook('onSend', (request: FastifyRequest, reply: FastifyReply, payload, done) => {
    const untouched = !states.get(request);
    if (untouched && (!isApi(request.url) || request.hasWebSessionCookie())) {
      void sessionForMirror(request).then(() => {
        setCookies(request, reply);
        done(null, payload);
      });
      return;
    }
    setCookies(request, reply);
    done(null, payload);
  });
}
