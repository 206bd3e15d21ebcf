import { resolveItem, targetOf, type TargetKey } from '../drive/tree.js';
import type { Action, ActionContext, ActionGuards, GuardedFields } from './define.js';
import { actingUser } from './account/user.js';
import { refuseLoginAs, requireRecentPasskeyStepUp, webOf } from './passkeys/shared.js';
import { requireStepUp, requireUnlocked, requireVault } from './vault/shared.js';

/**
 * The guard stage: an action's declared guards, enforced in one fixed order right before its `run` (inside
 * its transaction), so each refusal keeps the place it had when the guard was the first lines of `run`.
 * Returns the context `run` gets: the ActionContext plus what the guards established.
 */
export async function enforceGuards(guards: ActionGuards, ctx: ActionContext): Promise<ActionContext & Partial<GuardedFields>> {
  const out: ActionContext & Partial<GuardedFields> = { ...ctx };
  if (!guards.acting_user && !guards.browser && !guards.login_as && !guards.vault && !guards.step_up && !guards.drive_item) return out;
  const user = guards.acting_user ? actingUser(ctx.user) : ctx.user;
  const web = guards.browser ? webOf(ctx.web) : ctx.web;
  out.user = user;
  out.web = web;
  if (guards.login_as !== null) refuseLoginAs(ctx.principal, guards.login_as);
  // The guards below act for the signed-in user; registration refuses them on an action without one.
  const me = () => actingUser(user);
  if (guards.vault !== null) out.vault = await requireVault(ctx, me().usr_user_id);
  if (guards.step_up === 'passkey') requireRecentPasskeyStepUp(ctx, me().usr_user_id);
  if (guards.step_up === 'passkey_or_password') await requireStepUp(ctx, me(), (ctx.input as { password?: string | null }).password);
  if (guards.vault === 'unlocked') out.openVault = await requireUnlocked(ctx, webOf(web), me().usr_user_id);
  if (guards.drive_item !== null) out.item = await resolveItem(ctx.db, me().usr_user_id, driveTargetOf(guards.drive_item.of, ctx.input), guards.drive_item.need);
  return out;
}

function driveTargetOf(of: 'file' | 'file_or_folder', input: Record<string, unknown>): TargetKey {
  const ids = input as { file_id?: number | null; folder_id?: number | null };
  return of === 'file' ? { kind: 'file', id: ids.file_id! } : targetOf(ids);
}

/** Guards an action cannot keep with its auth contract or input; such a descriptor is refused at registration. */
export function guardProblems(action: Pick<Action, 'guards' | 'descriptor'>): string[] {
  const { guards, descriptor } = action;
  const problems: string[] = [];
  const input = descriptor.input ?? {};
  const declared = (['login_as', 'vault', 'step_up', 'drive_item'] as const).filter((g) => guards[g] !== null);
  if (!guards.acting_user) {
    for (const g of declared) problems.push(`${g} needs a signed-in user: it cannot be declared on a sessionless action or one that admits guests`);
  }
  if (guards.vault !== null && guards.vault !== 'set_up' && guards.vault !== 'unlocked') problems.push(`vault must be 'set_up' or 'unlocked'`);
  if (guards.vault === 'unlocked' && !guards.browser) problems.push(`vault 'unlocked' reads the browser session's vault window: it needs auth.requires_browser_session`);
  if (guards.step_up !== null && guards.step_up !== 'passkey' && guards.step_up !== 'passkey_or_password') problems.push(`step_up must be 'passkey' or 'passkey_or_password'`);
  if (guards.step_up === 'passkey_or_password' && !input.password) problems.push(`step_up 'passkey_or_password' needs a password input field`);
  if (guards.login_as !== null && (typeof guards.login_as !== 'string' || guards.login_as.trim() === '')) problems.push('login_as must be the start of the refusal message');
  const item = guards.drive_item;
  if (item !== null) {
    if (!['read', 'edit', 'owner'].includes(item.need)) problems.push(`drive_item.need must be 'read', 'edit' or 'owner'`);
    if (item.of === 'file' && input.file_id?.required !== true) problems.push('drive_item of a file needs a required file_id input field');
    if (item.of === 'file_or_folder' && (!input.file_id || !input.folder_id)) problems.push('drive_item of a file or folder needs file_id and folder_id input fields');
    if (item.of !== 'file' && item.of !== 'file_or_folder') problems.push(`drive_item.of must be 'file' or 'file_or_folder'`);
  }
  return problems;
}
