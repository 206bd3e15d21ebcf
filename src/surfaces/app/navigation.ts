import type { FastifyInstance } from 'fastify';
import type { AppNavigation, NavigationEntry } from '../../settings/app-navigation.js';
import { settingDefinition } from '../../settings/registry.js';
import { success } from '../../http/envelope.js';
import { authError } from '../../http/errors.js';
import type { Services } from '../../services.js';

/** GET /app/navigation: the profile-menu routing table for a native app, filtered to what the user may see. */
export async function appSurface(api: FastifyInstance, services: Services): Promise<void> {
  const { settings } = services;

  api.get('/app/navigation', { config: { feature: 'app' } }, async (request) => {
    request.logAction = 'navigation';
    const principal = await request.authenticate();
    if (principal.credential !== 'session' || !principal.user) throw authError(403, 'App navigation is for session keys only');
    const nav = settings.json<AppNavigation>('app_navigation');
    const permission = principal.user.usr_permission;
    const visible = (e: NavigationEntry): boolean =>
      !e.shell_auth &&
      (e.min_permission === undefined || permission >= e.min_permission) &&
      (e.requires_setting === undefined || (settingDefinition(e.requires_setting) !== undefined && Boolean(settings.get(e.requires_setting))));
    const entries = (nav.entries ?? []).filter(visible).map((e) => ({ slug: e.slug, label: e.label, destination: e.destination }));
    const shown = new Set(entries.map((e) => e.slug));
    const app = typeof request.headers.client_app === 'string' ? request.headers.client_app : '';
    const pinned = Object.prototype.hasOwnProperty.call(nav.tabs ?? {}, app) ? nav.tabs[app]! : [];
    return success({ entries, tabs: pinned.filter((slug) => shown.has(slug)) }, '');
  });
}
