import type { FastifyRequest } from 'fastify';

/** Which URL surface a route belongs to; recorded as the request log's feature. */
export type Feature =
  | 'crud'
  | 'action'
  | 'actions'
  | 'form'
  | 'management'
  | 'auth'
  | 'app'
  | 'relay'
  | 'agent'
  | 'webhooks'
  | 'upload'
  | 'rss'
  | 'unknown';

/**
 * How the front controller's authentication stage treats a route:
 * - 'required': authenticate before the handler (key headers, else browser session), 4xx otherwise;
 * - 'none': a channel with its own credentials, dispatched before key authentication;
 * - 'surface': the surface calls request.authenticate() itself after its pre-authentication checks
 *   (actions and forms: sessionless actions and requires_setting are decided first).
 */
export type AuthMode = 'required' | 'none' | 'surface';

declare module 'fastify' {
  interface FastifyContextConfig {
    feature?: Feature;
    auth?: AuthMode;
    /** The route's own rate-limit bucket, counted instead of the general one (the Drive upload bucket). */
    meter?: (request: FastifyRequest) => Promise<void>;
    /** Set on a plugin's routes (src/boot/plugins.ts): while it is inactive they answer as unknown. */
    plugin?: string;
    /**
     * The surface checks its body's text itself at its validation step (src/http/input-text.ts); the front
     * controller's check then covers only the path and query.
     */
    checksOwnBody?: boolean;
  }
  // What a request carries that names a domain type (its principal, its website session) is declared by
  // the floor that owns those types: src/accounts/auth/request.ts.
  interface FastifyRequest {
    startedAt: number;
    /** The action name, class and verb, or endpoint, for the request log. */
    logAction: string | null;
    /**
     * The failed-auth check of this request's address, read by the general bucket's store round trip
     * (key-authenticated requests); the authentication stage runs it instead of asking the store again.
     */
    failedAuthReading: (() => void) | null;
    /** Whether the request carries a website session cookie. */
    hasWebSessionCookie(): boolean;
  }
  interface FastifyReply {
    /** The errortype of an error answer, for the request log; null on success. */
    errortype: string | null;
  }
}
