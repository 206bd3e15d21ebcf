import type { Vault } from '../../accounts/vault/vaults.js';
import { vaultStatus } from '../../accounts/vault/unlockers.js';
import type { PrincipalUser } from '../../accounts/auth/principal.js';
import type { ActionContext, ActionResult, WebContext } from '../define.js';

/** Opens the session's window with an unwrapped secret and answers with the status. */
export async function openedAnswer(ctx: Pick<ActionContext, 'db'>, web: WebContext, me: PrincipalUser, vault: Vault, secretKey: Buffer): Promise<ActionResult> {
  await web.vault.openWith(ctx.db, vault, secretKey);
  const status = await vaultStatus(ctx.db, me.usr_user_id, { unlocked: true, times: await web.vault.times(ctx.db, me.usr_user_id) });
  return { data: status, message: 'Vault unlocked.' };
}
