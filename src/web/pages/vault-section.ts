import type { FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.js';
import { vaultWindowOf } from '../../accounts/vault/request-window.js';
import { vaultStatus } from '../../accounts/vault/unlockers.js';
import type { VaultWindows } from '../../accounts/vault/window.js';
import { html } from '../html.js';

/**
 * The vault card of Profile → Security: setup (codes shown once, with a download), unlock by passkey,
 * recovery code or passphrase, lock and rotation. Every change goes through the vault actions (vault.js).
 */
export async function vaultSection(services: { db: Kysely<DB>; vaultWindows: VaultWindows }, request: FastifyRequest, userId: number) {
  const window = vaultWindowOf(services, request);
  const times = await window.times(services.db, userId);
  const s = await vaultStatus(services.db, userId, { unlocked: times !== null, times });
  const hasPasskey = s.unlockers.some((u) => u.type === 'passkey');
  const hasPassphrase = s.unlockers.some((u) => u.type === 'passphrase');
  const state = !s.set_up ? 'none' : s.unlocked ? 'open' : 'locked';
  const content = !s.set_up
    ? html`<p class="help">The vault encrypts data you choose to seal (such as sealed Drive folders) with a key only your unlockers open.
  If you lose every unlocker, nobody can recover the sealed data, not even an administrator.</p>
  <form id="vault-setup-form" novalidate>
    <label for="vault_setup_password">Account password</label>
    <input id="vault_setup_password" name="password" type="password" autocomplete="current-password" required>
    <label for="vault_setup_passphrase">Passphrase <span class="help">(optional, at least 12 characters)</span></label>
    <input id="vault_setup_passphrase" name="passphrase" type="password" autocomplete="new-password" minlength="12">
    <label class="check"><input type="checkbox" name="acknowledge_loss" id="vault_ack"> I understand that sealed data is lost if I lose all my unlockers.</label>
    <button class="primary" type="submit">Set up the vault</button>
  </form>`
    : s.unlocked
      ? html`<p id="vault-state">Your vault is <strong>unlocked</strong> in this browser session.${s.window ? html` It locks by ${s.window.absolute_expires_time ?? s.window.idle_expires_time} UTC at the latest, or after 30 minutes without use.` : ''}</p>
  <p class="help">${s.recovery_codes_left} recovery codes left.${s.regenerate_recommended ? ' Generate new ones soon.' : ''}</p>
  <button class="secondary" type="button" id="vault-lock">Lock now</button>
  <form id="vault-rotate-form" novalidate>
    <p class="help">Rotation makes a new vault key and new recovery codes; the old codes stop working.</p>
    ${hasPasskey ? '' : html`<label for="vault_rotate_password">Account password</label>
    <input id="vault_rotate_password" name="password" type="password" autocomplete="current-password" required>`}
    <button class="secondary" type="submit">Rotate the vault key</button>
  </form>`
      : html`<p id="vault-state">Your vault is <strong>locked</strong>.</p>
  ${hasPasskey ? html`<button class="primary" type="button" id="vault-unlock-passkey">Unlock with a passkey</button>` : ''}
  <form id="vault-unlock-recovery-form" novalidate>
    <label for="vault_code">Recovery code</label>
    <input id="vault_code" name="code" type="text" autocomplete="off" spellcheck="false" required>
    <label for="vault_code_password">Account password</label>
    <input id="vault_code_password" name="password" type="password" autocomplete="current-password" required>
    <button class="secondary" type="submit">Unlock with a recovery code</button>
  </form>
  ${hasPassphrase
    ? html`<form id="vault-unlock-passphrase-form" novalidate>
    <label for="vault_passphrase">Passphrase</label>
    <input id="vault_passphrase" name="passphrase" type="password" autocomplete="off" required>
    <label for="vault_passphrase_password">Account password</label>
    <input id="vault_passphrase_password" name="password" type="password" autocomplete="current-password" required>
    <button class="secondary" type="submit">Unlock with the passphrase</button>
  </form>`
    : ''}`;
  return html`<div class="card" id="vault" data-state="${state}">
  <h2 style="margin-top:0">Vault</h2>
  ${content}
  <div id="vault-codes" hidden>
    <p><strong>Your recovery codes.</strong> Each works once. They are shown only now: store them somewhere safe.</p>
    <ol id="vault-code-list" class="codes"></ol>
    <a id="vault-codes-download" class="button secondary" download="gatehouse-recovery-codes.txt" href="#">Download as a text file</a>
    <button class="primary" type="button" id="vault-codes-done">I have stored them</button>
  </div>
  <p id="vault-status" role="status" aria-live="polite"></p>
</div>
<script src="/static/vault.js" defer></script>`;
}
