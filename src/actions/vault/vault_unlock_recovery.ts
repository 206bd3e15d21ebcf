import { isRecoveryCodeShaped, kekFromRecoveryCode } from '../../accounts/vault/crypto.js';
import { CODES_FLOOR, currentUnlockers } from '../../accounts/vault/unlockers.js';
import { markCodeUsed, openAnyWrap } from '../../accounts/vault/vaults.js';
import { businessError, validationError } from '../../http/errors.js';
import { defineAction } from '../define.js';
import { BROWSER_ONLY, PASSWORD_INPUT, requirePassword } from './shared.js';
import { openedAnswer } from './unlock.js';

/** Unlocks with the account password and one unused recovery code, which is spent. */
export default defineAction({
  name: 'vault_unlock_recovery',
  description: 'Unlock the vault with a one-time recovery code (and the account password)',
  auth: BROWSER_ONLY,
  mutates: false,
  input: { password: { ...PASSWORD_INPUT.password, required: true }, code: { type: 'password', required: true, max_length: 64 } },
  vault: 'set_up',
  async run(ctx) {
    const { user: me, web, vault } = ctx;
    await requirePassword(ctx, me, ctx.input.password);
    if (!isRecoveryCodeShaped(ctx.input.code)) throw validationError({ code: 'must be a 26-character recovery code' });
    const { codes } = await currentUnlockers(ctx.db, vault);
    const opened = await openAnyWrap(codes, (salt) => kekFromRecoveryCode(ctx.input.code, salt));
    // A spent code fails like a wrong one; the update succeeds once even for two concurrent requests.
    if (!opened || !(await markCodeUsed(ctx.db, opened.wrap.id, ctx.clock.now()))) {
      await ctx.recordFailedAuth();
      throw businessError('This recovery code is not valid', { reason: 'unlock_failed' });
    }
    const answer = await openedAnswer(ctx, web, me, vault, opened.secretKey);
    const left = codes.length - 1;
    return { ...answer, message: left < CODES_FLOOR ? `Vault unlocked. Only ${left} recovery codes left: generate new ones.` : 'Vault unlocked.' };
  },
});
