import type { FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { DB } from '../db/types.js';
import { displayName } from '../accounts/users.js';
import type { PrincipalUser } from '../accounts/auth/principal.js';
import type { NavLink, PageViewer } from './layout.js';
import type { WebSession, WebSessions } from '../accounts/web-sessions.js';
import type { Plugins } from '../settings/plugins.js';
import type { Settings } from '../settings/store.js';
import { driveFeatures, type TierFeatureReader } from '../tiers/features.js';

/**
 * A link a plugin puts in signed-in members' top bar (PluginModule.memberLinks), shown while the plugin
 * is active. The roof collects them from the loaded plugins; core never names a plugin.
 */
export interface PluginMemberLink {
  plugin: string;
  label: string;
  /** A site path of one of the plugin's pages, e.g. '/mail'. */
  path: string;
}

/** What reading a page's viewer takes (Services satisfies it). */
export interface PageViewerDeps {
  db: Kysely<DB>;
  webSessions: Pick<WebSessions, 'create'>;
  /** For the site name (site_name) in the page frame, and whether Drive is on. */
  settings: Pick<Settings, 'string' | 'bool'>;
  plugins: Pick<Plugins, 'isActive'>;
  tiers: { readerFor(scope: object): TierFeatureReader };
  memberLinks: readonly PluginMemberLink[];
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

/**
 * Whether Drive is of use to the member: Drive is on (drive_active) and their tier gives storage and
 * uploads (both limits above 0; tierless members have neither, DESIGN 9).
 */
export async function driveUsable(request: FastifyRequest, services: Pick<PageViewerDeps, 'settings' | 'tiers'>, userId: number): Promise<boolean> {
  if (!services.settings.bool('drive_active')) return false;
  const limits = await driveFeatures(services.tiers.readerFor(request), userId);
  return limits.storageBytes > 0 && limits.maxFileBytes > 0;
}

/** The member's own links in the top bar, in order: Drive, the active plugins' pages, then their account pages. */
async function memberNav(request: FastifyRequest, services: PageViewerDeps, userId: number): Promise<NavLink[]> {
  const links: NavLink[] = [];
  if (await driveUsable(request, services, userId)) links.push({ label: 'Drive', path: '/drive', id: 'nav-drive' });
  for (const link of services.memberLinks) {
    if (services.plugins.isActive(link.plugin)) links.push({ label: link.label, path: link.path, id: `nav-${link.plugin}` });
  }
  links.push({ label: 'Subscription', path: '/profile/subscription', id: 'nav-subscription' });
  links.push({ label: 'Security', path: '/profile/security', id: 'nav-security' });
  links.push({ label: 'App sessions', path: '/profile/app-sessions', id: 'nav-app-sessions' });
  return links;
}

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
  return { session, displayName: displayName(user), isStaff: user.usr_permission >= STAFF_PERMISSION, siteName, user, passwordChangeRequired, memberLinks: await memberNav(request, services, user.usr_user_id) };
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
