import type { FastifyInstance } from 'fastify';
import accountEdit from '../../actions/account/account_edit.js';
import addressEdit from '../../actions/account/address_edit.js';
import type { Action, FormUser } from '../../actions/define.js';
import type { Services } from '../../services.js';
import { actionField } from '../action-fields.js';
import { guardPage, sendViewerPage } from '../forms.js';
import { html } from '../html.js';
import { profileNav } from './profile-nav.js';

/** What the page says after action-form.js reopens it with ?done=... (an allowlist: nothing else is echoed). */
const DONE: Record<string, string> = { account: 'Your profile has been saved.', address: 'Your address has been saved.' };

/** The columns the profile form prefills from (never a password or secret). */
const PROFILE_COLUMNS = [
  'usr_user_id', 'usr_first_name', 'usr_last_name', 'usr_nickname', 'usr_email', 'usr_email_is_verified',
  'usr_timezone', 'usr_bio', 'usr_date_of_birth', 'usr_gender',
] as const;

/**
 * Profile: the member's name, email and the rest of account_edit, and their main address (address_edit).
 * The fields are the actions' own form definitions (GET /form/… serves the same), prefilled; saving goes
 * through serviceApi to the actions (action-form.js), whose validation errors show under their fields.
 */
export function profilePage(web: FastifyInstance, services: Services): void {
  const build = async (action: Action, user: FormUser) =>
    action.form!({ name: action.name, user, query: {}, db: services.db, clock: services.clock, settings: services.settings, caches: services.modelCaches });

  web.get('/profile', async (request, reply) => {
    const viewer = await guardPage(request, reply, services, 0);
    if (!viewer) return reply;
    const row = await services.db.selectFrom('usr_users').select(PROFILE_COLUMNS).where('usr_user_id', '=', viewer.user.usr_user_id).executeTakeFirstOrThrow();
    const user = row as unknown as FormUser;
    const [account, address] = await Promise.all([build(accountEdit, user), build(addressEdit, user)]);
    const doneKey = String((request.query as Record<string, unknown>).done ?? '');
    const done = Object.hasOwn(DONE, doneKey) ? DONE[doneKey] : '';
    const body = html`${profileNav('/profile')}
${done ? html`<p class="notice" role="status" id="profile-done">${done}</p>` : ''}
<div class="card">
  <h2>Name and email</h2>
  ${row.usr_email_is_verified ? '' : html`<p class="help" id="email-unverified">Your email address is not verified yet.</p>`}
  <form id="account-form" data-action="account_edit" data-done="/profile?done=account" novalidate>
    ${account.fields.map((f) => actionField(f, 'account-'))}
    <button class="primary" type="submit">${account.submit_label}</button>
    <p class="form-status" role="status"></p>
  </form>
</div>
<div class="card">
  <h2>Address</h2>
  <form id="address-form" data-action="address_edit" data-done="/profile?done=address" novalidate>
    ${address.fields.map((f) => actionField(f, 'address-'))}
    <button class="primary" type="submit">${address.submit_label}</button>
    <p class="form-status" role="status"></p>
  </form>
</div>
<script src="/static/action-form.js" defer></script>`;
    return sendViewerPage(reply, viewer, 'Profile', body);
  });
}
