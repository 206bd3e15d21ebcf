import type { Action } from '../define.js';
import passkeyLoginOptions from './passkey_login_options.js';
import passkeyLoginVerify from './passkey_login_verify.js';
import passkeyRegisterOptions from './passkey_register_options.js';
import passkeyRegisterVerify from './passkey_register_verify.js';
import passkeyRename from './passkey_rename.js';
import passkeyRevoke from './passkey_revoke.js';
import passkeyStepupOptions from './passkey_stepup_options.js';
import passkeyStepupVerify from './passkey_stepup_verify.js';

/** The eight passkey actions (SPEC "Available actions"), all for browser sessions only. */
export const passkeyActions: Action[] = [
  passkeyLoginOptions,
  passkeyLoginVerify,
  passkeyRegisterOptions,
  passkeyRegisterVerify,
  passkeyStepupOptions,
  passkeyStepupVerify,
  passkeyRename,
  passkeyRevoke,
];
