import { webauthn } from '../../accounts/passkeys/webauthn.js';
import { CEREMONY_TTL_MS, beginCeremony, consumeCeremony, type CeremonyKind } from '../../accounts/passkeys/ceremonies.js';
import { passkeyByCredentialId, type StoredPasskey } from '../../accounts/passkeys/credentials.js';
import { USER_VERIFICATION } from '../../accounts/passkeys/relying-party.js';
import { hasRecentStepUp } from '../../accounts/passkeys/step-up.js';
import { verifySecret } from '../../accounts/passwords.js';
import { PRF_SALT } from '../../accounts/vault/crypto.js';
import { lockVault, vaultOf, type Vault } from '../../accounts/vault/vaults.js';
import type { OpenVault } from '../../accounts/vault/window.js';
import type { PrincipalUser } from '../../accounts/auth/principal.js';
import { businessError, validationError } from '../../http/errors.js';
import type { ActionContext, WebContext } from '../define.js';
import type { InputSchema } from '../input.js';
import { verifyAssertion } from '../passkeys/assertion.js';
import { CREDENTIAL_INPUT, ceremonyRefusal, relyingParty, type CredentialInput } from '../passkeys/shared.js';

export { BROWSER_ONLY, webOf } from '../passkeys/shared.js';

/** The 32 bytes the browser's PRF evaluation returned, base64url. */
export const PRF_OUTPUT_INPUT = { prf_output: { type: 'string', max_length: 64 } } as const satisfies InputSchema;

/** A passkey assertion that an action accepts but does not require. */
export const OPTIONAL_CREDENTIAL_INPUT = {
  id: { ...CREDENTIAL_INPUT.id, required: false },
  rawId: { ...CREDENTIAL_INPUT.rawId, required: false },
  type: { ...CREDENTIAL_INPUT.type, required: false },
  response: { ...CREDENTIAL_INPUT.response, required: false },
  clientExtensionResults: CREDENTIAL_INPUT.clientExtensionResults,
  authenticatorAttachment: CREDENTIAL_INPUT.authenticatorAttachment,
} as const satisfies InputSchema;

export const PASSWORD_INPUT = { password: { type: 'password', max_length: 255 } } as const satisfies InputSchema;

type Ctx = Pick<ActionContext, 'db' | 'clock' | 'settings' | 'session' | 'log' | 'recordFailedAuth'>;

export function prfOutputOf(value: string | null | undefined): Buffer {
  const bytes = typeof value === 'string' && /^[A-Za-z0-9_-]+$/.test(value) ? Buffer.from(value, 'base64url') : null;
  if (!bytes || bytes.length !== 32) throw validationError({ prf_output: 'must be the 32-byte PRF output, base64url' });
  return bytes;
}

export async function requireVault(ctx: Pick<Ctx, 'db'>, userId: number): Promise<Vault> {
  const vault = await vaultOf(ctx.db, userId);
  if (!vault) throw businessError('You have not set up a vault', { reason: 'vault_not_set_up' });
  return vault;
}

/** The account password, checked like a sign-in (a wrong one counts toward the failed-auth limit). */
export async function requirePassword(ctx: Ctx, me: PrincipalUser, password: string | null | undefined): Promise<void> {
  if (!password) throw validationError({ password: 'is required' });
  const row = await ctx.db.selectFrom('usr_users').select('usr_password').where('usr_user_id', '=', me.usr_user_id).executeTakeFirstOrThrow();
  if (!row.usr_password || !(await verifySecret(row.usr_password, password))) {
    await ctx.recordFailedAuth();
    throw validationError({ password: 'is incorrect' });
  }
}

/**
 * The open window's secret for this user (counts as a decrypt), or 422 vault_locked. In a transaction (an
 * action that writes wraps of the secret) the vault row is held shared first (lockVault): the secret is of
 * the generation current until the commit, never one a concurrent rotation is retiring.
 */
export async function requireUnlocked(ctx: Pick<Ctx, 'db'>, web: WebContext, userId: number): Promise<OpenVault> {
  if (ctx.db.isTransaction) await lockVault(ctx.db, userId, 'seal');
  const open = await web.vault.unsealFor(ctx.db, userId);
  if (!open) throw businessError('Unlock your vault first', { reason: 'vault_locked' });
  return open;
}

/**
 * A recent passkey step-up; an account without any passkey confirms with its password instead (it has no
 * other second proof).
 */
export async function requireStepUp(ctx: Ctx, me: PrincipalUser, password: string | null | undefined): Promise<void> {
  if (hasRecentStepUp(ctx.session, me.usr_user_id, ctx.clock, ctx.settings.int('passkey_stepup_window_seconds'))) return;
  const hasPasskey = await ctx.db
    .selectFrom('pky_passkeys')
    .select('pky_passkey_id')
    .where('pky_usr_user_id', '=', me.usr_user_id)
    .where('pky_delete_time', 'is', null)
    .executeTakeFirst();
  if (hasPasskey) throw businessError('Confirm with one of your passkeys first', { reason: 'stepup_required' });
  await requirePassword(ctx, me, password);
}

/** Authentication options for these passkeys that ask the browser to evaluate the vault's PRF salt. */
export async function beginPrfCeremony(ctx: Ctx, web: WebContext, me: PrincipalUser, kind: CeremonyKind, passkeys: StoredPasskey[]) {
  const rp = relyingParty(web, ctx.settings);
  const options = await (await webauthn()).generateAuthenticationOptions({
    rpID: rp.id,
    userVerification: USER_VERIFICATION,
    timeout: CEREMONY_TTL_MS,
    allowCredentials: passkeys.map((p) => ({ id: p.credentialId, transports: p.transports as never })),
  });
  await beginCeremony(ctx.db, ctx.clock, { webSessionId: web.sessionId, kind, challenge: options.challenge, userId: me.usr_user_id });
  const prfSalt = PRF_SALT.toString('base64url');
  return { ...(options as unknown as Record<string, unknown>), extensions: { prf: { eval: { first: prfSalt } } }, prf_salt: prfSalt };
}

/** Takes this session's pending vault ceremony of this kind (spent whatever happens next). */
export async function takeCeremony(ctx: Ctx, web: WebContext, me: PrincipalUser, kind: CeremonyKind): Promise<string> {
  const ceremony = await consumeCeremony(ctx.db, ctx.clock, web.sessionId, kind);
  if (ceremony.kind !== 'ok') throw ceremonyRefusal(ceremony.kind);
  if (ceremony.userId !== me.usr_user_id) throw ceremonyRefusal('missing');
  return ceremony.challenge;
}

/** Verifies an assertion by one of the caller's own passkeys against the challenge. */
export async function verifiedPasskey(ctx: Ctx, web: WebContext, me: PrincipalUser, input: CredentialInput, challenge: string): Promise<StoredPasskey> {
  const passkey = await passkeyByCredentialId(ctx.db, input.id);
  const ok = passkey !== null && passkey.userId === me.usr_user_id && (await verifyAssertion(ctx, input, challenge, passkey, relyingParty(web, ctx.settings)));
  if (!ok) {
    await ctx.recordFailedAuth();
    throw businessError('The passkey could not be verified', { reason: 'verification_failed' });
  }
  return passkey!;
}

/** The optional credential fields as an assertion, when they were sent (null when none were). */
export function credentialOf(input: Record<string, unknown>): CredentialInput | null {
  const { id, rawId, type, response } = input;
  if (id == null && rawId == null && response == null) return null;
  if (typeof id !== 'string' || typeof rawId !== 'string' || type !== 'public-key' || typeof response !== 'object' || response === null) {
    throw validationError({ response: 'id, rawId, type and response are required together' });
  }
  return input as unknown as CredentialInput;
}
