import type { FastifyInstance } from 'fastify';
import { passkeysOf, type StoredPasskey } from '../../accounts/passkeys/credentials.js';
import { formatTimestamp } from '../../lib/time.js';
import type { Services } from '../../services.js';
import { MIN_PASSWORD_LENGTH } from '../../accounts/passwords.js';
import { guardPage, sendViewerPage } from '../forms.js';
import { html } from '../html.js';
import { profileNav } from './profile-nav.js';
import { vaultSection } from './vault-section.js';

/** What the page says after passkeys.js reloads it with ?done=... (an allowlist: nothing else is echoed). */
const DONE: Record<string, string> = { added: 'Passkey added.', renamed: 'Passkey renamed.', removed: 'Passkey removed.', password: 'Your password has been changed.' };

const when = (d: Date | null) => (d ? `${formatTimestamp(d).slice(0, 16)} UTC` : 'Never');

function passkeyRow(p: StoredPasskey) {
  const label = p.label ?? 'Unnamed passkey';
  return html`<tr data-passkey-id="${p.id}">
  <td data-label="Name"><span class="passkey-label">${label}</span>
    <form class="rename-form" hidden novalidate>
      <input type="text" name="label" maxlength="100" required value="${label}" aria-label="New name for ${label}">
      <button class="primary" type="submit" style="margin-top:.5rem">Save</button>
      <button class="secondary" type="button" data-cancel-rename style="margin-top:.5rem">Cancel</button>
    </form></td>
  <td data-label="Added">${when(p.createTime)}</td>
  <td data-label="Last used">${when(p.lastUsedTime)}</td>
  <td data-label="PRF capable">${p.prfCapable ? 'Yes' : 'No'}</td>
  <td class="actions"><button class="link" type="button" data-rename>Rename</button> · <button class="link" type="button" data-remove style="color:#b3261e">Remove</button></td>
</tr>`;
}

/** The password change (password_edit through action-form.js); it closes the member's app sessions. */
const passwordCard = (email: string) => html`<div class="card" id="password">
  <h2 style="margin-top:0">Password</h2>
  <form id="password-form" data-action="password_edit" data-done="/profile/security?done=password" novalidate>
    <input type="email" autocomplete="username" value="${email}" hidden aria-hidden="true">
    <label for="current_password_change">Current password</label>
    <input id="current_password_change" name="current_password" type="password" autocomplete="current-password" required maxlength="255">
    <div class="field-error" data-for="current_password"></div>
    <label for="new_password">New password</label>
    <input id="new_password" name="new_password" type="password" autocomplete="new-password" required minlength="${MIN_PASSWORD_LENGTH}" maxlength="255">
    <div class="help">At least ${MIN_PASSWORD_LENGTH} characters. Changing it signs out your apps (their sessions end); this browser stays signed in.</div>
    <div class="field-error" data-for="new_password"></div>
    <button class="primary" type="submit">Change password</button>
    <p class="form-status" role="status"></p>
  </form>
</div>`;

/**
 * Profile → Security: the password change, and the member's passkeys (label, created, last used, PRF capability) with add, rename and
 * remove. Every change goes through the passkey actions with serviceApi (passkeys.js); this page only lists.
 */
export function securityPage(web: FastifyInstance, services: Services): void {
  web.get('/profile/security', async (request, reply) => {
    const viewer = await guardPage(request, reply, services, 0);
    if (!viewer) return reply;
    const passkeys = await passkeysOf(services.db, viewer.user.usr_user_id);
    const first = passkeys.length === 0;
    const doneKey = String((request.query as Record<string, unknown>).done ?? '');
    const done = Object.hasOwn(DONE, doneKey) ? DONE[doneKey] : '';
    const list = first
      ? html`<p id="no-passkeys">You have no passkeys yet.</p>`
      : html`<table id="passkeys" class="stack"><thead><tr><th>Name</th><th>Added</th><th>Last used</th><th>PRF capable</th><th></th></tr></thead>
<tbody>${passkeys.map(passkeyRow)}</tbody></table>`;
    const body = html`${profileNav('/profile/security')}${done ? html`<p class="notice" id="${doneKey === 'password' ? 'password-done' : 'passkey-done'}">${done}</p>` : ''}${passwordCard(viewer.user.usr_email)}<div class="card">
  <h2 style="margin-top:0">Passkeys</h2>
  <p class="help">A passkey signs you in with your device's fingerprint, face or screen lock, or a security key, instead of your password.
  A PRF-capable passkey can also unlock encrypted data.</p>
  ${list}
  <div id="remove-confirm" class="notice" role="alertdialog" aria-labelledby="remove-confirm-text" hidden>
    <p id="remove-confirm-text" style="margin-top:0"></p>
    <button class="secondary danger" type="button" id="remove-confirm-yes" style="margin-top:0">Remove</button>
    <button class="secondary" type="button" id="remove-confirm-no" style="margin-top:0">Keep it</button>
  </div>
</div>
<div class="card">
  <h2 style="margin-top:0">Add a passkey</h2>
  <form id="add-passkey-form" data-first="${first ? 'true' : 'false'}" novalidate>
    ${first
      ? html`<label for="current_password">Current password</label>
    <input id="current_password" name="current_password" type="password" autocomplete="current-password" required>
    <div class="help">Your first passkey needs your account password.</div>`
      : html`<p class="help" style="margin-top:0">You will first confirm it is you with one of your passkeys.</p>`}
    <label for="passkey_label">Name <span class="help">(optional)</span></label>
    <input id="passkey_label" name="label" type="text" maxlength="100" placeholder="Work laptop">
    <button class="primary" type="submit" id="add-passkey-button">Add a passkey</button>
  </form>
  <noscript><p class="error">Passkeys need JavaScript.</p></noscript>
</div>
<p id="passkey-status" role="status" aria-live="polite"></p>
${await vaultSection(services, request, viewer.user.usr_user_id)}
<script src="/static/simplewebauthn-browser.js" defer></script>
<script src="/static/passkeys.js" defer></script>
<script src="/static/action-form.js" defer></script>`;
    return sendViewerPage(reply, viewer, 'Security', body);
  });
}
