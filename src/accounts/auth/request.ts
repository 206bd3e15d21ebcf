import type { WebSession } from '../web-sessions.js';
import type { Principal } from './principal.js';

// What a request carries that names an accounts type. The request machinery's own fields (timing, the
// route's feature and auth mode, the log's action) are declared in src/http/request-context.ts; the roof
// (src/boot/app.ts) decorates the request with both and imports both for their types.
declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | null;
    /** Runs the authentication stage at most once per request and returns the principal. */
    authenticate(): Promise<Principal>;
    /** The website session named by the request's cookie, loaded at most once per request. */
    webSession(): Promise<WebSession | null>;
    /** Replaces the request's website session (sign-in, sign-out) and sets its cookies on the reply. */
    useWebSession(cookieValue: string | null, session: WebSession | null): void;
  }
}
