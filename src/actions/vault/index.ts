import type { Action } from '../define.js';
import vaultSetupOptions from './vault_setup_options.js';
import vaultSetupVerify from './vault_setup_verify.js';
import vaultStatus from './vault_status.js';
import vaultUnlockOptions from './vault_unlock_options.js';
import vaultUnlockPasskey from './vault_unlock_passkey.js';
import vaultUnlockRecovery from './vault_unlock_recovery.js';
import vaultUnlockPassphrase from './vault_unlock_passphrase.js';
import vaultLock from './vault_lock.js';
import vaultHeartbeat from './vault_heartbeat.js';
import vaultAddPasskeyOptions from './vault_add_passkey_options.js';
import vaultAddPasskeyVerify from './vault_add_passkey_verify.js';
import vaultRegenerateCodes from './vault_regenerate_codes.js';
import vaultPassphraseEnroll from './vault_passphrase_enroll.js';
import vaultPassphraseRemove from './vault_passphrase_remove.js';
import vaultRotateOptions from './vault_rotate_options.js';
import vaultRotateVerify from './vault_rotate_verify.js';

/** The sixteen vault actions (SPEC "Available actions"), all for browser sessions only. */
export const vaultActions: Action[] = [
  vaultSetupOptions,
  vaultSetupVerify,
  vaultStatus,
  vaultUnlockOptions,
  vaultUnlockPasskey,
  vaultUnlockRecovery,
  vaultUnlockPassphrase,
  vaultLock,
  vaultHeartbeat,
  vaultAddPasskeyOptions,
  vaultAddPasskeyVerify,
  vaultRegenerateCodes,
  vaultPassphraseEnroll,
  vaultPassphraseRemove,
  vaultRotateOptions,
  vaultRotateVerify,
];
