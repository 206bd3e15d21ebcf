import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.js';
import { formatTimestamp } from '../../lib/time.js';
import type { PasskeyVeto } from '../passkeys/vetoes.js';
import { liveWraps, vaultOf, type Vault, type Wrap } from './vaults.js';

/** Below this many unused codes a regeneration is recommended, and the floor needs a passkey. */
export const CODES_FLOOR = 3;

/** A vault's usable unlockers of its current generation: passkey wraps only while the passkey is live. */
export async function currentUnlockers(db: Kysely<DB>, vault: Vault): Promise<{ passkeys: Wrap[]; codes: Wrap[]; passphrase: Wrap | null }> {
  const wraps = await liveWraps(db, vault.id, { generation: vault.generation });
  const livePasskeys = new Set(
    (
      await db
        .selectFrom('pky_passkeys')
        .select('pky_passkey_id')
        .where('pky_usr_user_id', '=', vault.userId)
        .where('pky_delete_time', 'is', null)
        .execute()
    ).map((r) => r.pky_passkey_id),
  );
  return {
    passkeys: wraps.filter((w) => w.type === 'passkey' && w.passkeyId !== null && livePasskeys.has(w.passkeyId)),
    codes: wraps.filter((w) => w.type === 'recovery' && w.usedTime === null),
    passphrase: wraps.find((w) => w.type === 'passphrase') ?? null,
  };
}

/**
 * The unlocker floor (DESIGN 10): a removal is refused when it would leave no passkey wrapping and fewer
 * than 3 unused recovery codes.
 */
export async function floorRefusal(db: Kysely<DB>, vault: Vault, removing: { passkeyId?: number; passphrase?: boolean }) {
  const u = await currentUnlockers(db, vault);
  const passkeysLeft = u.passkeys.filter((w) => w.passkeyId !== removing.passkeyId).length;
  if (passkeysLeft > 0 || u.codes.length >= CODES_FLOOR) return null;
  return {
    reason: 'unlocker_floor',
    message: `Removing this would leave your vault without a passkey and with fewer than ${CODES_FLOOR} recovery codes; add a passkey or regenerate your codes first`,
  };
}

export async function vaultStatus(db: Kysely<DB>, userId: number, window: { unlocked: boolean; times: { idle_expires_time: Date; absolute_expires_time: Date | null } | null }) {
  const vault = await vaultOf(db, userId);
  if (!vault) {
    return { set_up: false, unlocked: false, key_generation: null, unlockers: [], recovery_codes_left: 0, regenerate_recommended: false, window: null };
  }
  const u = await currentUnlockers(db, vault);
  const labels = new Map(
    (await db.selectFrom('pky_passkeys').select(['pky_passkey_id', 'pky_label']).where('pky_usr_user_id', '=', userId).execute()).map((r) => [r.pky_passkey_id, r.pky_label]),
  );
  const unlockers: Record<string, unknown>[] = [
    ...u.passkeys.map((w) => ({ type: 'passkey', label: labels.get(w.passkeyId!) ?? 'Passkey', passkey_id: w.passkeyId, create_time: formatTimestamp(w.createTime) })),
    ...(u.codes.length > 0 ? [{ type: 'recovery', label: 'Recovery codes', codes_left: u.codes.length }] : []),
    ...(u.passphrase ? [{ type: 'passphrase', label: 'Passphrase', create_time: formatTimestamp(u.passphrase.createTime) }] : []),
  ];
  return {
    set_up: true,
    unlocked: window.unlocked,
    key_generation: vault.generation,
    unlockers,
    recovery_codes_left: u.codes.length,
    regenerate_recommended: u.codes.length < CODES_FLOOR,
    window: window.times
      ? {
          idle_expires_time: formatTimestamp(window.times.idle_expires_time),
          absolute_expires_time: window.times.absolute_expires_time ? formatTimestamp(window.times.absolute_expires_time) : null,
        }
      : null,
  };
}

/** The vault's veto on a passkey revocation: the unlocker floor. */
export const unlockerFloorVeto: PasskeyVeto = async (db, { userId, passkeyId }) => {
  const vault = await vaultOf(db, userId);
  return vault ? floorRefusal(db, vault, { passkeyId }) : null;
};

/** The vault's veto on a passkey-only sign-in: a vault's owner signs in with the password. */
export const vaultPasswordVeto: PasskeyVeto = async (db, { userId }) =>
  (await vaultOf(db, userId)) ? { reason: 'password_required', message: 'This account has a sealed vault: sign in with your password' } : null;
