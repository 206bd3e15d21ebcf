import { vaultStatus } from '../../accounts/vault/unlockers.js';
import { insertRecoveryCodes, liveWraps, retireWraps } from '../../accounts/vault/vaults.js';
import { defineAction } from '../define.js';
import { BROWSER_ONLY, PASSWORD_INPUT } from './shared.js';

/** Replaces every recovery code with 10 new ones (shown once); the old ones stop working at once. */
export default defineAction({
  name: 'vault_regenerate_codes',
  description: 'Replace all recovery codes; needs step-up and an unlocked vault',
  auth: BROWSER_ONLY,
  mutates: true,
  input: PASSWORD_INPUT,
  vault: 'unlocked',
  step_up: 'passkey_or_password',
  async run(ctx) {
    const { user: me, web, vault, openVault: open } = ctx;
    const now = ctx.clock.now();
    const old = await liveWraps(ctx.db, vault.id, { type: 'recovery' });
    const codes = await insertRecoveryCodes(ctx.db, open.vault, open.vault.generation, open.secretKey, now);
    await retireWraps(ctx.db, old.map((w) => w.id), now);
    const times = await web.vault.times(ctx.db, me.usr_user_id);
    return {
      data: { ...(await vaultStatus(ctx.db, me.usr_user_id, { unlocked: times !== null, times })), recovery_codes: codes },
      message: 'New recovery codes: store them now, they are not shown again. The old codes no longer work.',
      sealedFor: [me.usr_user_id],
    };
  },
});
