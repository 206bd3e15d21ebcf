import type { Kysely } from 'kysely';
import { consumeCode } from '../../accounts/activation-codes.js';
import type { ActivationCodePurpose, DB } from '../../db/types.js';
import { businessError, validationError } from '../../http/errors.js';
import { newPasswordField } from './password.js';

/** The input of the actions that set a password by presenting a mailed code (reset, first activation). */
export const codePasswordInput = {
  act_code: { type: 'string', required: true, max_length: 128 },
  password: newPasswordField,
  password_confirm: { type: 'password', required: true, max_length: 255 },
} as const;

/**
 * Checks the confirmation and spends the code. A bad code counts as a failed authentication and is a
 * 422 with reason invalid_code; returns the code's user.
 */
export async function redeemPasswordCode(
  ctx: { input: { act_code: string; password: string; password_confirm: string }; db: Kysely<DB>; now: Date; recordFailedAuth(): Promise<void> },
  purpose: ActivationCodePurpose,
  refusal: string,
): Promise<number> {
  if (ctx.input.password_confirm !== ctx.input.password) throw validationError({ password_confirm: 'does not match the password' });
  const userId = await consumeCode(ctx.db, ctx.input.act_code, purpose, ctx.now);
  if (userId === null) {
    await ctx.recordFailedAuth();
    throw businessError(refusal, { reason: 'invalid_code' });
  }
  return userId;
}
