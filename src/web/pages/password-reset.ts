import type { FastifyInstance, FastifyReply } from 'fastify';
import { isCodeUsable } from '../../accounts/activation-codes.js';
import { MIN_PASSWORD_LENGTH } from '../../accounts/passwords.js';
import { ANSWER as RESET_REQUESTED } from '../../actions/account/password_reset_1.js';
import { isApiError } from '../../http/errors.js';
import type { Services } from '../../services.js';
import { sendViewerPage, type Viewer } from '../forms.js';
import { html, type SafeHtml } from '../html.js';
import { pageViewer } from '../viewer.js';

const SCRIPTS = html`<script src="/static/action-form.js" defer></script><script src="/static/password-reset.js" defer></script>`;

function requestForm(): SafeHtml {
  return html`<div class="card">
  <p style="margin-top:0">Enter the email address of your account. We will send you a link to choose a new password.</p>
  <form id="reset-request-form" data-action="password_reset_1" data-success="${RESET_REQUESTED}" data-once novalidate>
    <label for="email">Email</label>
    <input id="email" name="email" type="email" autocomplete="email" required maxlength="64">
    <div class="field-error" data-for="email"></div>
    <button class="primary" type="submit">Send reset link</button>
    <p class="form-status" role="status"></p>
  </form>
  <p><a href="/login">Back to sign-in</a></p>
</div>`;
}

function newPasswordForm(code: string): SafeHtml {
  return html`<div class="card">
  <form id="reset-password-form" data-action="password_reset_2" data-done="/login?done=password_reset" novalidate>
    <input type="hidden" name="act_code" value="${code}">
    <label for="password">New password</label>
    <input id="password" name="password" type="password" autocomplete="new-password" required minlength="${MIN_PASSWORD_LENGTH}" maxlength="255">
    <div class="help">At least ${MIN_PASSWORD_LENGTH} characters.</div>
    <div class="field-error" data-for="password"></div>
    <label for="password_confirm">New password again</label>
    <input id="password_confirm" name="password_confirm" type="password" autocomplete="new-password" required maxlength="255">
    <div class="field-error" data-for="password_confirm"></div>
    <div class="field-error" data-for="act_code"></div>
    <button class="primary" type="submit">Set new password</button>
    <p class="form-status" role="status"></p>
  </form>
</div>`;
}

const unusable = html`<div class="card" id="reset-link-invalid"><p class="error" style="margin-top:0">This reset link is invalid, already used or expired.</p>
<p>A link works once and for one hour; setting a new password with one makes the others useless. <a href="/password-reset">Ask for a new link</a>.</p></div>`;

/**
 * Forgotten password, on the website: /password-reset asks for the email (password_reset_1, whose answer is
 * the same for every address); the mailed link /password-reset?act_code=… asks for the new password
 * (password_reset_2), then the member signs in with it. Both go through serviceApi (action-form.js), so
 * the actions' own rules and rate limits apply. The code is checked before the form is shown: an unusable
 * one counts as a failed authentication like the action's refusal does. Log lines name the route, never
 * the URL, so the code in the query is not logged; the page's script drops it from the address bar.
 */
export function passwordResetPages(web: FastifyInstance, services: Services): void {
  web.get('/password-reset', async (request, reply) => {
    const viewer = await pageViewer(request, services);
    const raw = (request.query as Record<string, unknown>).act_code;
    const code = typeof raw === 'string' ? raw.trim() : '';
    if (code === '') return sendResetPage(reply, viewer, 'Forgot your password?', requestForm());
    try {
      await services.buckets.failedAuth.check(request.ip);
    } catch (e) {
      if (!isApiError(e)) throw e;
      reply.header('retry-after', e.headers['retry-after'] ?? '60');
      return sendResetPage(reply, viewer, 'Choose a new password', html`<div class="card"><p class="error">Too many failed attempts. Please wait and try again.</p></div>`, 429);
    }
    if (code.length > 128 || !(await isCodeUsable(services.db, code, 'password_reset', services.clock.now()))) {
      await services.buckets.failedAuth.record(request.ip);
      return sendResetPage(reply, viewer, 'Choose a new password', unusable, 400);
    }
    return sendResetPage(reply, viewer, 'Choose a new password', newPasswordForm(code));
  });
}

function sendResetPage(reply: FastifyReply, viewer: Viewer, title: string, body: SafeHtml, status = 200): FastifyReply {
  return sendViewerPage(reply, viewer, title, html`${body}${SCRIPTS}`, status);
}
