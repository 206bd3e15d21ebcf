import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const JS = 'application/javascript; charset=utf-8';

/** Where the installed @simplewebauthn/browser keeps its browser bundle (it defines window.SimpleWebAuthnBrowser). */
function webauthnBundlePath(): string {
  const entry = createRequire(import.meta.url).resolve('@simplewebauthn/browser');
  return path.join(path.dirname(entry), '..', 'dist', 'bundle', 'index.umd.min.js');
}

/** The scripts passkey pages load: the WebAuthn client library, as installed, and our page script. */
export function passkeyAssets(staticDir: string): Array<[string, { type: string; body: string }]> {
  return [
    ['simplewebauthn-browser.js', { type: JS, body: readFileSync(webauthnBundlePath(), 'utf8') }],
    ['passkeys.js', { type: JS, body: readFileSync(path.join(staticDir, 'passkeys.js'), 'utf8') }],
  ];
}
