import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Settings } from '../settings/store.js';
import { html, type SafeHtml } from './html.js';
import { apiRefusesRequest } from './https-notice.js';
import { page, sendPage, type PageOptions } from './layout.js';
import { checkFormToken, formToken } from '../accounts/web-sessions.js';
import { STAFF_PERMISSION, pageViewer, type PageViewerDeps, type SignedInUser } from './viewer.js';

export type Viewer = Awaited<ReturnType<typeof pageViewer>>;

export function bodyField(request: FastifyRequest, name: string): string {
  const v = ((request.body ?? {}) as Record<string, unknown>)[name];
  return typeof v === 'string' ? v : '';
}

export function hasBodyField(request: FastifyRequest, name: string): boolean {
  return Object.prototype.hasOwnProperty.call(request.body ?? {}, name);
}

/** Every value posted under a name: a repeated field (a checkbox after its hidden twin) arrives as an array. */
export function bodyValues(request: FastifyRequest, name: string): string[] {
  const v = ((request.body ?? {}) as Record<string, unknown>)[name];
  if (typeof v === 'string') return [v];
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
}

/**
 * A checkbox rendered after a hidden input of the same name with value 'false' (so that unchecked
 * still posts the field): checked when any posted value is 'true'.
 */
export function bodyChecked(request: FastifyRequest, name: string): boolean {
  return bodyValues(request, name).includes('true');
}

/** A checkbox that posts 'false' when unchecked and 'true' (after the hidden 'false') when checked. */
export function checkboxInput(id: string, checked: boolean): SafeHtml {
  return html`<input type="hidden" name="${id}" value="false"><input id="${id}" name="${id}" type="checkbox" value="true" ${checked ? html`checked` : ''}>`;
}

/** A labelled field with its error shown right below it. */
export function fieldBlock(id: string, label: string | SafeHtml, control: SafeHtml, error?: string, help?: string): SafeHtml {
  return html`<div class="field">
  <label for="${id}">${label}</label>
  ${control}
  ${help ? html`<div class="help">${help}</div>` : ''}
  ${error ? html`<div class="field-error" id="${id}-error" role="alert">${error}</div>` : ''}
</div>`;
}

export function tokenInput(viewer: Viewer, formName: string): SafeHtml {
  return html`<input type="hidden" name="form_token" value="${viewer.session ? formToken(viewer.session, formName) : ''}">`;
}

export function logoutToken(viewer: Viewer): string {
  return viewer.session ? formToken(viewer.session, 'logout') : '';
}

/**
 * Shown above a page's content while the member's password must be changed (the initial admin's generated
 * password): the security page has the form, so it says so itself.
 */
export function passwordChangeBanner(viewer: Viewer): SafeHtml | '' {
  if (!viewer.passwordChangeRequired) return '';
  return html`<div class="banner" id="password-change-banner" role="alert"><strong>Please change your password.</strong>
  Your password was generated when the site was set up (or an administrator asked for a new one).
  <a href="/profile/security#password">Choose a new password</a>.</div>`;
}

export function sendViewerPage(reply: FastifyReply, viewer: Viewer, title: string, body: SafeHtml, status = 200, opts: PageOptions = {}): FastifyReply {
  const content = html`${passwordChangeBanner(viewer)}${body}`;
  return sendPage(reply, page(viewer, title, content, { formToken: logoutToken(viewer), wide: opts.wide }), status, opts);
}

/**
 * The page guard: anonymous visitors go to sign-in, signed-in users below `minPermission` get 403.
 * Returns the viewer, or null when a response was already sent.
 */
export async function guardPage(request: FastifyRequest, reply: FastifyReply, services: PageViewerDeps & { settings: Settings }, minPermission: number): Promise<(Viewer & { user: SignedInUser }) | null> {
  const viewer = await pageViewer(request, services);
  if (!viewer.user) {
    await reply.redirect(`/login?next=${encodeURIComponent(request.url)}`, 303);
    return null;
  }
  if (viewer.user.usr_permission < minPermission) {
    await sendViewerPage(reply, viewer, 'Forbidden', html`<div class="card"><p class="error">This page is for staff only.</p></div>`, 403);
    return null;
  }
  if (minPermission >= STAFF_PERMISSION) viewer.apiRefusesHttp = apiRefusesRequest(request, services.settings);
  return viewer as Viewer & { user: SignedInUser };
}

/** Checks a POSTed form's per-form token; sends a 403 page and returns false when it is wrong. */
export async function checkPostedForm(request: FastifyRequest, reply: FastifyReply, viewer: Viewer, formName: string): Promise<boolean> {
  if (checkFormToken(viewer.session, formName, bodyField(request, 'form_token'))) return true;
  await sendViewerPage(reply, viewer, 'Form expired', html`<div class="card"><p class="error">The form expired. Go back, reload and try again.</p></div>`, 403);
  return false;
}
