import type { Kysely } from 'kysely';
import type { DB } from '../db/types.js';
import type { Clock } from '../lib/clock.js';
import { randomHex, sha256Hex } from '../lib/crypto.js';

export const BRIDGE_TOKEN_SECONDS = 60;

export class BridgeTargetError extends Error {}

/**
 * A bridge target must be a same-origin relative path: '/' then anything but a second slash or a
 * backslash, with no control characters and no scheme. '/' is the default.
 */
export function validateBridgeTarget(raw: unknown): string {
  if (raw === undefined || raw === null || raw === '') return '/';
  if (typeof raw !== 'string') throw new BridgeTargetError('target must be a string');
  if (raw.length > 2048) throw new BridgeTargetError('target is too long');
  if (/[\u0000-\u001f\u007f]/.test(raw)) throw new BridgeTargetError('target must not contain control characters');
  if (raw.includes('\\')) throw new BridgeTargetError('target must not contain backslashes');
  if (!raw.startsWith('/')) throw new BridgeTargetError('target must be a relative path starting with /');
  if (raw.startsWith('//')) throw new BridgeTargetError('target must not be scheme-relative');
  let decoded = raw;
  try {
    decoded = decodeURIComponent(raw);
  } catch {
    throw new BridgeTargetError('target is not a valid path');
  }
  if (decoded.startsWith('//') || decoded.includes('\\') || /[\u0000-\u001f\u007f]/.test(decoded)) {
    throw new BridgeTargetError('target must stay on this site');
  }
  return raw;
}

/** Issues a one-time token for the presenting session key; only its hash is stored. */
export async function issueBridgeToken(db: Kysely<DB>, clock: Clock, input: { userId: number; apiKeyId: number; target: string }): Promise<string> {
  const token = randomHex(32);
  const now = clock.now();
  await db
    .insertInto('wsb_web_session_bridges')
    .values({
      wsb_token_hash: sha256Hex(token),
      wsb_usr_user_id: input.userId,
      wsb_apk_api_key_id: input.apiKeyId,
      wsb_target: input.target,
      wsb_create_time: now,
      wsb_expires_time: new Date(now.getTime() + BRIDGE_TOKEN_SECONDS * 1000),
    })
    .execute();
  return token;
}

/**
 * Spends a bridge token: succeeds once, within its 60 seconds, while the session key that asked for it
 * is still live and its user neither deleted nor disabled (what the key itself needs to authenticate).
 * The conditional update makes a second (or concurrent) use fail.
 */
export async function consumeBridgeToken(db: Kysely<DB>, clock: Clock, token: string): Promise<{ userId: number; target: string } | null> {
  if (!/^[0-9a-f]{64}$/.test(token)) return null;
  const now = clock.now();
  return db.transaction().execute(async (trx) => {
    const row = await trx
      .updateTable('wsb_web_session_bridges')
      .set({ wsb_used_time: now })
      .where('wsb_token_hash', '=', sha256Hex(token))
      .where('wsb_used_time', 'is', null)
      .where('wsb_expires_time', '>', now)
      .returning(['wsb_usr_user_id', 'wsb_apk_api_key_id', 'wsb_target'])
      .executeTakeFirst();
    if (!row) return null;
    const key = await trx
      .selectFrom('apk_api_keys')
      .innerJoin('usr_users', 'usr_user_id', 'apk_usr_user_id')
      .select(['apk_api_key_id'])
      .where('apk_api_key_id', '=', row.wsb_apk_api_key_id)
      .where('apk_delete_time', 'is', null)
      .where('apk_is_active', '=', true)
      .where('usr_delete_time', 'is', null)
      .where('usr_is_disabled', '=', false)
      .where((eb) => eb.or([eb('apk_expires_time', 'is', null), eb('apk_expires_time', '>', now)]))
      .executeTakeFirst();
    if (!key) return null;
    return { userId: row.wsb_usr_user_id, target: row.wsb_target };
  });
}
