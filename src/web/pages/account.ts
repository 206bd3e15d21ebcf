import type { FastifyInstance, FastifyRequest } from 'fastify';
import { mayActOn } from '../../accounts/authority.js';
import { vaultWindowOf } from '../../accounts/vault/request-window.js';
import { verifyLogin } from '../../accounts/login.js';
import { isApiError } from '../../http/errors.js';
import type { Services } from '../../services.js';
import { html } from '../html.js';
import { page, sendPage, type PageViewer } from '../layout.js';
import { checkFormToken, formToken } from '../../accounts/web-sessions.js';
import { landingAfterSignIn, pageViewer, safeLocalPath } from '../viewer.js';
import { passkeySignIn } from './passkey-sign-in.js';

function field(request: FastifyRequest, name: string): string {
  const body = (request.body ?? {}) as Record<string, unknown>;
  const v = body[name];
  return typeof v === 'string' ? v : '';
}

/** What the sign-in page says after another page sent the visitor here with ?done=... (an allowlist). */
const LOGIN_DONE: Record<string, string> = { password_reset: 'Your password has been changed. Sign in with your new password.' };

function loginForm(viewer: PageViewer, opts: { email?: string; next?: string; error?: string; done?: string }) {
  const token = viewer.session ? formToken(viewer.session, 'login') : '';
  const next = opts.next ?? '';
  // After a passkey sign-in the script opens /login again, which sends the member on like the form does.
  const afterPasskey = next ? `/login?next=${encodeURIComponent(next)}` : '/login';
  return page(
    viewer,
    'Sign in',
    html`${opts.done ? html`<p class="notice" role="status" id="login-done">${opts.done}</p>` : ''}<div class="card">
  ${opts.error ? html`<p class="error" role="alert" id="login-error">${opts.error}</p>` : ''}
  <form method="post" action="/login" novalidate>
    <input type="hidden" name="form_token" value="${token}">
    <input type="hidden" name="next" value="${next}">
    <label for="email">Email</label>
    <input id="email" name="email" type="email" autocomplete="username" required value="${opts.email ?? ''}">
    <label for="password">Password</label>
    <input id="password" name="password" type="password" autocomplete="current-password" required>
    <p class="help" style="margin:.25rem 0 0"><a href="/password-reset" id="forgot-password">Forgot password?</a></p>
    <button class="primary" type="submit">Sign in</button>
  </form>
  ${passkeySignIn(afterPasskey)}
  <p>No account yet? <a href="/register${next ? `?next=${encodeURIComponent(next)}` : ''}">Register</a>.</p>
</div>
<script src="/static/simplewebauthn-browser.js" defer></script>
<script src="/static/passkeys.js" defer></script>`,
    { formToken: viewer.session ? formToken(viewer.session, 'logout') : '' },
  );
}

/** Website sign-in (works without JavaScript), sign-out and registration (the home page is in site.ts). */
export function accountPages(web: FastifyInstance, services: Services): void {
  const { db, buckets, webSessions } = services;

  web.get('/login', async (request, reply) => {
    const viewer = await pageViewer(request, services);
    const query = request.query as Record<string, unknown>;
    // '' when there is no (safe) next: the landing then depends on who signs in.
    const next = safeLocalPath(query.next, '');
    if (viewer.user) {
      return reply.redirect(landingAfterSignIn({ ...viewer.user, usr_force_password_change: viewer.passwordChangeRequired }, next || null), 303);
    }
    const doneKey = String(query.done ?? '');
    return sendPage(reply, loginForm(viewer, { next, ...(Object.hasOwn(LOGIN_DONE, doneKey) ? { done: LOGIN_DONE[doneKey] } : {}) }));
  });

  web.post('/login', async (request, reply) => {
    const viewer = await pageViewer(request, services);
    const email = field(request, 'email').trim();
    const password = field(request, 'password');
    const next = safeLocalPath(field(request, 'next'), '');
    if (!checkFormToken(viewer.session, 'login', field(request, 'form_token'))) {
      return sendPage(reply, loginForm(viewer, { email, next, error: 'The form expired. Please try again.' }), 403);
    }
    try {
      await buckets.failedAuth.check(request.ip);
    } catch (e) {
      if (!isApiError(e)) throw e;
      reply.header('retry-after', e.headers['retry-after'] ?? '60');
      return sendPage(reply, loginForm(viewer, { email, next, error: 'Too many failed attempts. Please wait and try again.' }), 429);
    }
    if (email === '' || password === '') {
      return sendPage(reply, loginForm(viewer, { email, next, error: 'Enter your email and password.' }), 400);
    }
    const user = await verifyLogin(db, email, password);
    if (!user) {
      await buckets.failedAuth.record(request.ip);
      return sendPage(reply, loginForm(viewer, { email, next, error: 'Invalid email or password.' }), 401);
    }
    const { cookieValue, session } = await webSessions.signIn(viewer.session, user.usr_user_id);
    request.useWebSession(cookieValue, session);
    const signedIn = await db
      .updateTable('usr_users')
      .set({ usr_lastlogin_time: services.clock.now() })
      .where('usr_user_id', '=', user.usr_user_id)
      .returning(['usr_permission', 'usr_force_password_change'])
      .executeTakeFirstOrThrow();
    return reply.redirect(landingAfterSignIn(signedIn, next || null), 303);
  });

  web.post('/logout', async (request, reply) => {
    const session = await request.webSession();
    if (session && checkFormToken(session, 'logout', field(request, 'form_token'))) {
      await webSessions.end(session.id);
      // Sign-out closes the session's vault window (DESIGN 10); without the token it opens nothing anyway.
      await vaultWindowOf(services, request).close(services.db);
      request.useWebSession(null, null);
    }
    return reply.redirect('/login', 303);
  });

  // Staff sign in as a member; the session records who did it, and the staff member's own session ends.
  web.post('/admin/users/:id/login-as', async (request, reply) => {
    const viewer = await pageViewer(request, services);
    if (!viewer.user) return reply.redirect('/login', 303);
    if (!viewer.isStaff) return sendPage(reply, page(viewer, 'Forbidden', html`<div class="card"><p class="error">Staff only.</p></div>`), 403);
    if (!checkFormToken(viewer.session, 'login-as', field(request, 'form_token'))) {
      return sendPage(reply, page(viewer, 'Forbidden', html`<div class="card"><p class="error">The form expired. Please try again.</p></div>`), 403);
    }
    const targetId = Number((request.params as { id: string }).id);
    const target = Number.isInteger(targetId)
      ? await db.selectFrom('usr_users').select(['usr_user_id', 'usr_permission']).where('usr_user_id', '=', targetId).where('usr_delete_time', 'is', null).executeTakeFirst()
      : undefined;
    if (!target) return sendPage(reply, page(viewer, 'Not found', html`<div class="card"><p class="error">No such user.</p></div>`), 404);
    if (!mayActOn(viewer.user, target)) {
      return sendPage(reply, page(viewer, 'Forbidden', html`<div class="card"><p class="error">You cannot sign in as a user with more permission than yours.</p></div>`), 403);
    }
    const { cookieValue, session } = await webSessions.signIn(viewer.session, target.usr_user_id, { loginAsBy: viewer.user.usr_user_id });
    request.useWebSession(cookieValue, session);
    return reply.redirect('/', 303);
  });

  // Registering signs this browser in (the register action, called with the page's session) and goes on to
  // `next` when it is a same-origin path, else to the plans.
  web.get('/register', async (request, reply) => {
    const viewer = await pageViewer(request, services);
    const next = safeLocalPath((request.query as Record<string, unknown>).next, '/pricing');
    return sendPage(
      reply,
      page(
        viewer,
        'Register',
        html`<div class="card">
  <form id="register-form" data-next="${next}" novalidate>
    <label for="usr_first_name">First name</label><input id="usr_first_name" name="usr_first_name" type="text" required maxlength="32">
    <div class="field-error" data-for="usr_first_name"></div>
    <label for="usr_last_name">Last name</label><input id="usr_last_name" name="usr_last_name" type="text" maxlength="32">
    <div class="field-error" data-for="usr_last_name"></div>
    <label for="usr_email">Email</label><input id="usr_email" name="usr_email" type="email" autocomplete="email" required maxlength="64">
    <div class="field-error" data-for="usr_email"></div>
    <label for="password">Password</label><input id="password" name="password" type="password" autocomplete="new-password" required minlength="8">
    <div class="field-error" data-for="password"></div>
    <button class="primary" type="submit">Create account</button>
    <p id="register-result" role="status"></p>
  </form>
  <p>Already registered? <a href="/login${next === '/pricing' ? '' : `?next=${encodeURIComponent(next)}`}">Sign in</a>.</p>
</div>
<script src="/static/register.js" defer></script>`,
        { formToken: viewer.session ? formToken(viewer.session, 'logout') : '' },
      ),
    );
  });
}
