import type { FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { DB } from '../db/types.js';
import { displayName } from '../accounts/users.js';
import type { PrincipalUser } from '../accounts/auth/principal.js';
import type { PageViewer } from './layout.js';
import type { WebSession, WebSessions } from '../accounts/web-sessions.js';
import type { Settings } from '../settings/store.js';

/** What reading a page's viewer takes (Services satisfies it). */
export interface PageViewerDeps {
  db: Kysely<DB>;
  webSessions: Pick<WebSessions, 'create'>;
  /** For the site name (site_name) in the page frame. */
  settings: Pick<Settings, 'string'>;
}

/** The page's session, creating a guest session when there is none (guests need a CSRF token too). */
export async function ensureWebSession(request: FastifyRequest, services: Pick<PageViewerDeps, 'webSessions'>): Promise<WebSession> {
  const existing = await request.webSession();
  if (existing) return existing;
  const { cookieValue, session } = await services.webSessions.create({ userId: null });
  request.useWebSession(cookieValue, session);
  return session;
}

/** The signed-in user a page sees: the same shape the API's principal carries. */
export type SignedInUser = PrincipalUser;

/** usr_permission from which a user is staff. */
export const STAFF_PERMISSION = 5;

export async function pageViewer(
  request: FastifyRequest,
  services: PageViewerDeps,
): Promise<PageViewer & { user: SignedInUser | null; passwordChangeRequired: boolean }> {
  const session = await ensureWebSession(request, services);
  const siteName = services.settings.string('site_name');
  if (session.userId === null) return { session, displayName: null, isStaff: false, siteName, user: null, passwordChangeRequired: false };
  const row = await services.db
    .selectFrom('usr_users')
    .select(['usr_user_id', 'usr_email', 'usr_first_name', 'usr_last_name', 'usr_nickname', 'usr_permission', 'usr_force_password_change'])
    .where('usr_user_id', '=', session.userId)
    .where('usr_delete_time', 'is', null)
    .where('usr_is_disabled', '=', false)
    .executeTakeFirst();
  // A deleted or disabled user's session is signed out in effect (the API ends it; pages see a guest).
  if (!row) return { session, displayName: null, isStaff: false, siteName, user: null, passwordChangeRequired: false };
  const { usr_force_password_change: passwordChangeRequired, ...user } = row;
  return { session, displayName: displayName(user), isStaff: user.usr_permission >= STAFF_PERMISSION, siteName, user, passwordChangeRequired };
}

/**
 * Where a member goes right after signing in: to change a password that must be changed (the initial
 * admin's generated one), else to the page they came for, else staff to the dashboard and members home.
 */
export function landingAfterSignIn(user: { usr_permission: number; usr_force_password_change: boolean }, next: string | null): string {
  if (user.usr_force_password_change) return '/profile/security';
  if (next) return next;
  return user.usr_permission >= STAFF_PERMISSION ? '/admin' : '/';
}

/** A same-origin relative path, or '/' for anything else (open-redirect guard). */
export function safeLocalPath(raw: unknown, fallback = '/'): string {
  if (typeof raw !== 'string' || raw === '') return fallback;
  if (!raw.startsWith('/') || raw.startsWith('//') || raw.includes('\\') || /[\u0000-\u001f\u007f]/.test(raw)) return fallback;
  return raw;
}
