import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Services } from '../services.js';
import { CSRF_MIRROR_COOKIE, SESSION_COOKIE, type WebSession } from './sessions.js';

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
 */
export function registerWebSessionRequest(app: FastifyInstance, services: Services): void {
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

  app.addHook('onSend', (request: FastifyRequest, reply: FastifyReply, payload, done) => {
    const s = states.get(request);
    if (!s) return done(null, payload);
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
    done(null, payload);
  });
}
