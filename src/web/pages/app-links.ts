import type { FastifyInstance, FastifyRequest } from 'fastify';
import { DeviceLinkInputError, decideDeviceLink, findPendingLink, formatLinkCode, normaliseLinkCode, validateSealedVaultKey } from '../../accounts/device-links.js';
import { consumeBridgeToken } from '../../accounts/web-session-bridge.js';
import { isApiError } from '../../http/errors.js';
import type { Services } from '../../services.js';
import { html } from '../html.js';
import { page, sendPage } from '../layout.js';
import { checkFormToken, formToken } from '../../accounts/web-sessions.js';
import { pageViewer } from '../viewer.js';

const PLATFORM_NAMES = { macos: 'macOS', windows: 'Windows', linux: 'Linux' } as const;

function field(request: FastifyRequest, name: string): string {
  const v = ((request.body ?? {}) as Record<string, unknown>)[name];
  return typeof v === 'string' ? v : '';
}

/** The web-session bridge a native app's webview loads, and the device-link approval page. */
export function appLinkPages(web: FastifyInstance, services: Services): void {
  const { db, clock, webSessions, buckets } = services;

  web.get('/auth/bridge/:token', async (request, reply) => {
    const { token } = request.params as { token: string };
    const spent = await consumeBridgeToken(db, clock, token);
    if (!spent) {
      return sendPage(reply, page({ session: null, displayName: null, isStaff: false }, 'Link expired', html`<div class="card"><p class="error">This link has expired or was already used. Open it again from the app.</p></div>`), 410);
    }
    const previous = await request.webSession();
    const { cookieValue, session } = await webSessions.signIn(previous, spent.userId, { context: 'app' });
    request.useWebSession(cookieValue, session);
    return reply.redirect(spent.target, 302);
  });

  const devicePage = async (request: FastifyRequest, opts: { code?: string; error?: string; done?: string }) => {
    const viewer = await pageViewer(request, services);
    const logout = viewer.session ? formToken(viewer.session, 'logout') : '';
    const token = viewer.session ? formToken(viewer.session, 'device') : '';
    const link = opts.code && !opts.done ? await findPendingLink(db, clock, opts.code) : null;
    let body;
    if (opts.done) {
      body = html`<div class="card"><p class="notice" role="status" id="device-result">${opts.done}</p></div>`;
    } else if (link) {
      body = html`<div class="card">
  ${opts.error ? html`<p class="error" role="alert">${opts.error}</p>` : ''}
  <p>A device is asking to be linked to your account:</p>
  <p><strong id="device-name">${link.deviceName}</strong> (${PLATFORM_NAMES[link.platform]})</p>
  <p>Code: <code>${formatLinkCode(normaliseLinkCode(opts.code!))}</code>. Approve it only if you started this on your own device.</p>
  <form method="post" action="/device" id="device-decision"${link.devicePubkey ? html` data-device-pubkey="${link.devicePubkey}"` : ''}>
    <input type="hidden" name="form_token" value="${token}">
    <input type="hidden" name="code" value="${opts.code}">
    ${link.devicePubkey
      ? html`<!-- A client holding the user's vault secret (shared encrypted folders) seals it to data-device-pubkey here. -->
    <input type="hidden" name="sealed_vault_key" id="sealed_vault_key" value="">`
      : ''}
    <button class="primary" type="submit" name="decision" value="approve">Approve</button>
    <button class="primary" type="submit" name="decision" value="deny" style="background:#6b7280">Refuse</button>
  </form>
</div>`;
    } else {
      body = html`<div class="card">
  ${opts.error ? html`<p class="error" role="alert">${opts.error}</p>` : ''}
  <form method="get" action="/device">
    <label for="code">Code shown on your device</label>
    <input id="code" name="code" type="text" autocomplete="off" value="${opts.code ?? ''}" placeholder="XXXX-XXXX">
    <button class="primary" type="submit">Continue</button>
  </form>
</div>`;
    }
    return page(viewer, 'Link a device', body, { formToken: logout });
  };

  web.get('/device', async (request, reply) => {
    const viewer = await pageViewer(request, services);
    const code = String((request.query as Record<string, unknown>).code ?? '');
    if (!viewer.user) return reply.redirect(`/login?next=${encodeURIComponent(`/device${code ? `?code=${encodeURIComponent(code)}` : ''}`)}`, 303);
    if (code) {
      try {
        await buckets.failedAuth.check(request.ip);
      } catch (e) {
        if (!isApiError(e)) throw e;
        return sendPage(reply, await devicePage(request, { error: 'Too many wrong codes. Please wait and try again.' }), 429);
      }
      if (!(await findPendingLink(db, clock, code))) {
        await buckets.failedAuth.record(request.ip);
        return sendPage(reply, await devicePage(request, { code, error: 'That code is not valid or has expired.' }), 404);
      }
    }
    return sendPage(reply, await devicePage(request, { code }));
  });

  web.post('/device', async (request, reply) => {
    const viewer = await pageViewer(request, services);
    if (!viewer.user) return reply.redirect('/login?next=%2Fdevice', 303);
    const code = field(request, 'code');
    if (!checkFormToken(viewer.session, 'device', field(request, 'form_token'))) {
      return sendPage(reply, await devicePage(request, { code, error: 'The form expired. Please try again.' }), 403);
    }
    const link = await findPendingLink(db, clock, code);
    if (!link) {
      await buckets.failedAuth.record(request.ip);
      return sendPage(reply, await devicePage(request, { error: 'That code is not valid or has expired.' }), 404);
    }
    const approve = field(request, 'decision') === 'approve';
    let sealed: string | null;
    try {
      sealed = validateSealedVaultKey(field(request, 'sealed_vault_key'));
      if (sealed !== null && link.devicePubkey === null) throw new DeviceLinkInputError('sealed_vault_key', 'This device sent no key to seal to.');
    } catch (e) {
      if (!(e instanceof DeviceLinkInputError)) throw e;
      return sendPage(reply, await devicePage(request, { code, error: e.message }), 400);
    }
    const decided = await decideDeviceLink(db, clock, link.id, viewer.user.usr_user_id, approve, sealed);
    if (!decided) return sendPage(reply, await devicePage(request, { error: 'That code is not valid or has expired.' }), 409);
    return sendPage(reply, await devicePage(request, { done: approve ? `${link.deviceName} is now linked to your account.` : `${link.deviceName} was refused.` }));
  });
}
