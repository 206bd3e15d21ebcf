import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { SECURITY_HEADERS } from '../http/transport.js';
import { isApiError } from '../http/errors.js';
import { PROJECT_ROOT } from '../lib/paths.js';
import type { Services } from '../services.js';
import { html } from './html.js';
import { page, sendPage } from './layout.js';
import { accountPages } from './pages/account.js';
import { contentPages } from './pages/content.js';
import { sitePages } from './pages/site.js';
import { contentAdminPages } from './pages/admin/content.js';
import { appLinkPages } from './pages/app-links.js';
import { apiKeysAdminPage } from './pages/admin/api-keys.js';
import { webhooksAdminPage } from './pages/admin/webhooks.js';
import { subscriptionSettingsPage } from './pages/admin/settings.js';
import { generalSettingsPage } from './pages/admin/general-settings.js';
import { appSessionsPage } from './pages/app-sessions.js';
import { cartPage } from './pages/cart.js';
import { tierListPage } from './pages/admin/tier-list.js';
import { tierEditPages } from './pages/admin/tiers.js';
import { tierMembersPage } from './pages/admin/tier-members.js';
import { memberAdminPage } from './pages/admin/member.js';
import { membersListPage } from './pages/admin/members.js';
import { ordersListPage } from './pages/admin/orders.js';
import { memberImportPages } from './pages/admin/member-import.js';
import { productAdminPages } from './pages/admin/products.js';
import { dashboardPage } from './pages/admin/dashboard.js';
import { memberEmailsAdminPages } from './pages/admin/emails.js';
import { outboxAdminPages } from './pages/admin/outbox.js';
import { ghostImportAdminPages } from './pages/admin/ghost-import.js';
import { pricingPage } from './pages/pricing.js';
import { subscriptionPage } from './pages/subscription.js';
import { orderPage } from './pages/order.js';
import { securityPage } from './pages/security.js';
import { profilePage } from './pages/profile.js';
import { passwordResetPages } from './pages/password-reset.js';
import { passkeyAssets } from './passkey-assets.js';
import { driveFilePages } from './pages/drive-files.js';
import { drivePage } from './pages/drive.js';

const STATIC_DIR = path.join(PROJECT_ROOT, 'src', 'web', 'static');
const STATIC_FILES: Record<string, string> = { 'serviceApi.js': 'application/javascript; charset=utf-8', 'register.js': 'application/javascript; charset=utf-8', 'cart.js': 'application/javascript; charset=utf-8', 'subscription.js': 'application/javascript; charset=utf-8', 'admin-member.js': 'application/javascript; charset=utf-8', 'admin-import.js': 'application/javascript; charset=utf-8', 'order.js': 'application/javascript; charset=utf-8', 'confirm.js': 'application/javascript; charset=utf-8', 'pricing.js': 'application/javascript; charset=utf-8', 'drive.js': 'application/javascript; charset=utf-8', 'vault.js': 'application/javascript; charset=utf-8', 'vault-beacon.js': 'application/javascript; charset=utf-8', 'action-form.js': 'application/javascript; charset=utf-8', 'password-reset.js': 'application/javascript; charset=utf-8' };

/** Server-rendered pages and their static assets, outside the API's front controller. */
/** What the pages need of each loaded plugin: its pages, if it has any. */
export interface PluginPages {
  name: string;
  webRoutes?(web: FastifyInstance, services: Services): Promise<void> | void;
}

export async function webRoutes(web: FastifyInstance, services: Services, plugins: readonly PluginPages[]): Promise<void> {
  web.addHook('onRequest', async (_request, reply) => {
    reply.headers(SECURITY_HEADERS);
  });

  const assets = new Map(Object.entries(STATIC_FILES).map(([name, type]) => [name, { type, body: readFileSync(path.join(STATIC_DIR, name), 'utf8') }]));
  for (const [name, asset] of passkeyAssets(STATIC_DIR)) assets.set(name, asset);
  web.get('/static/:name', async (request, reply) => {
    const asset = assets.get((request.params as { name: string }).name);
    if (!asset) return reply.code(404).type('text/plain').send('Not found');
    return reply.type(asset.type).header('cache-control', 'public, max-age=300').send(asset.body);
  });

  // The site icon: an SVG (<link rel="icon"> in every page); /favicon.ico, which browsers ask for on
  // their own, points to it.
  const favicon = readFileSync(path.join(STATIC_DIR, 'favicon.svg'), 'utf8');
  web.get('/favicon.svg', async (_request, reply) => reply.type('image/svg+xml').header('cache-control', 'public, max-age=86400').send(favicon));
  web.get('/favicon.ico', async (_request, reply) => reply.redirect('/favicon.svg', 301));

  web.setErrorHandler(async (error, request, reply) => {
    const status = isApiError(error) ? error.status : typeof (error as { statusCode?: number }).statusCode === 'number' ? (error as { statusCode: number }).statusCode : 500;
    if (status >= 500) request.log.error({ err: error, reqId: request.id }, 'page error');
    const message = status >= 500 ? `Something went wrong (ref ${request.id}).` : isApiError(error) ? error.message : 'The request could not be processed.';
    return sendPage(reply, page({ session: null, displayName: null, isStaff: false, siteName: services.settings.string('site_name') }, 'Error', html`<div class="card"><p class="error">${message}</p></div>`), status);
  });

  const notFound = (reply: FastifyReply) =>
    sendPage(reply, page({ session: null, displayName: null, isStaff: false, siteName: services.settings.string('site_name') }, 'Not found', html`<div class="card"><p>There is no page here.</p></div>`), 404);
  web.setNotFoundHandler(async (_request, reply) => notFound(reply));

  accountPages(web, services);
  contentPages(web, services);
  sitePages(web, services);
  contentAdminPages(web, services);
  appLinkPages(web, services);
  apiKeysAdminPage(web, services);
  webhooksAdminPage(web, services);
  subscriptionSettingsPage(web, services);
  generalSettingsPage(web, services);
  appSessionsPage(web, services);
  cartPage(web, services);
  tierListPage(web, services);
  tierEditPages(web, services);
  tierMembersPage(web, services);
  membersListPage(web, services);
  memberAdminPage(web, services);
  ordersListPage(web, services);
  memberImportPages(web, services);
  productAdminPages(web, services);
  subscriptionPage(web, services);
  orderPage(web, services);
  securityPage(web, services);
  profilePage(web, services);
  passwordResetPages(web, services);
  drivePage(web, services);
  driveFilePages(web, services);
  dashboardPage(web, services);
  memberEmailsAdminPages(web, services);
  outboxAdminPages(web, services);
  await ghostImportAdminPages(web, services);
  pricingPage(web, services);

  // A plugin's pages: while it is inactive, the same not-found page as a path that was never a page.
  for (const plugin of plugins) {
    const pages = plugin.webRoutes;
    if (!pages) continue;
    await web.register(async (scope) => {
      scope.addHook('onRequest', async (_request, reply) => (services.plugins.isActive(plugin.name) ? undefined : notFound(reply)));
      await pages(scope, services);
    });
  }
}
