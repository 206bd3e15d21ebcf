import { html, type SafeHtml } from '../html.js';

/**
 * The login page's passkey option: revealed by passkeys.js only where the browser supports WebAuthn (the
 * password form works everywhere). After signing in it goes to `next`, a path already made safe.
 */
export function passkeySignIn(next: string): SafeHtml {
  return html`<div id="passkey-signin" data-next="${next}" hidden>
    <p class="help" style="margin:1.25rem 0 0;text-align:center">or</p>
    <button class="secondary" type="button" id="passkey-signin-button" style="width:100%;margin-top:.5rem">Sign in with a passkey</button>
    <p class="error" role="alert" id="passkey-signin-error" hidden></p>
  </div>`;
}
