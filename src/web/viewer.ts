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

export async function pageViewer(request: FastifyRequest, services: PageViewerDeps): Promise<PageViewer & { user: SignedInUser | null }> {
  const session = await ensureWebSession(request, services);
  const siteName = services.settings.string('site_name');
  if (session.userId === null) return { session, displayName: null, isStaff: false, siteName, user: null };
  const user = await services.db
    .selectFrom('usr_users')
    .select(['usr_user_id', 'usr_email', 'usr_first_name', 'usr_last_name', 'usr_nickname', 'usr_permission'])
    .where('usr_user_id', '=', session.userId)
    .where('usr_delete_time', 'is', null)
    .where('usr_is_disabled', '=', false)
    .executeTakeFirst();
  // A deleted or disabled user's session is signed out in effect (the API ends it; pages see a guest).
  if (!user) return { session, displayName: null, isStaff: false, siteName, user: null };
  return { session, displayName: displayName(user), isStaff: user.usr_permission >= 5, siteName, user };
}

/** A same-origin relative path, or '/' for anything else (open-redirect guard). */
export function safeLocalPath(raw: unknown, fallback = '/'): string {
  if (typeof raw !== 'string' || raw === '') return fallback;
  if (!raw.startsWith('/') || raw.startsWith('//') || raw.includes('\\') || /[\u0000-\u001f\u007f]/.test(raw)) return fallback;
  return raw;
}
