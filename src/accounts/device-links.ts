import type { Kysely } from 'kysely';
import type { DB } from '../db/types.js';
import type { Clock } from '../lib/clock.js';
import { randomHex, randomReadableCode, sha256Hex } from '../lib/crypto.js';
import { createSessionKey, type IssuedKey } from './api-keys.js';

export const DEVICE_LINK_SECONDS = 600;
export const POLL_AFTER_SECONDS = 3;
export const PLATFORMS = ['macos', 'windows', 'linux'] as const;
export type Platform = (typeof PLATFORMS)[number];

export class DeviceLinkInputError extends Error {
  constructor(readonly field: string, message: string) {
    super(message);
  }
}

/** Link codes are 8 characters of a 32-letter alphabet without look-alikes (40 bits), shown as XXXX-XXXX. */
export function formatLinkCode(code: string): string {
  return `${code.slice(0, 4)}-${code.slice(4)}`;
}

export function normaliseLinkCode(input: string): string {
  return input.toUpperCase().replace(/[\s-]/g, '');
}

/** The longest sealed vault key accepted (decoded bytes): a sealed 32-to-64-byte secret plus its envelope. */
export const SEALED_VAULT_KEY_MAX_BYTES = 1024;

/**
 * An optional sealed vault key from the approving page: canonical base64, 1 to SEALED_VAULT_KEY_MAX_BYTES
 * bytes. It is opaque here (only the device's private key opens it), so nothing more can be checked.
 */
export function validateSealedVaultKey(raw: unknown): string | null {
  if (raw === undefined || raw === null || raw === '') return null;
  if (typeof raw !== 'string' || !/^[A-Za-z0-9+/]+={0,2}$/.test(raw)) throw new DeviceLinkInputError('sealed_vault_key', 'sealed_vault_key must be base64');
  const bytes = Buffer.from(raw, 'base64');
  if (bytes.length === 0 || bytes.length > SEALED_VAULT_KEY_MAX_BYTES || bytes.toString('base64') !== raw) {
    throw new DeviceLinkInputError('sealed_vault_key', 'sealed_vault_key is not a sealed key');
  }
  return raw;
}

/** An optional X25519 public key: base64 of exactly 32 bytes. */
export function validateDevicePubkey(raw: unknown): string | null {
  if (raw === undefined || raw === null || raw === '') return null;
  if (typeof raw !== 'string' || !/^[A-Za-z0-9+/_-]+={0,2}$/.test(raw)) throw new DeviceLinkInputError('device_pubkey', 'device_pubkey must be base64');
  const bytes = Buffer.from(raw.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
  if (bytes.length !== 32) throw new DeviceLinkInputError('device_pubkey', 'device_pubkey must be a 32-byte X25519 public key');
  return bytes.toString('base64');
}

export interface StartedLink {
  linkCode: string;
  pollToken: string;
  expiresTime: Date;
}

export async function startDeviceLink(db: Kysely<DB>, clock: Clock, input: { deviceName: unknown; platform: unknown; devicePubkey: unknown }): Promise<StartedLink> {
  const name = typeof input.deviceName === 'string' ? input.deviceName.trim() : '';
  if (name === '' || name.length > 100 || /[\u0000-\u001f\u007f]/.test(name)) {
    throw new DeviceLinkInputError('device_name', 'device_name must be 1 to 100 printable characters');
  }
  if (typeof input.platform !== 'string' || !(PLATFORMS as readonly string[]).includes(input.platform)) {
    throw new DeviceLinkInputError('platform', `platform must be one of ${PLATFORMS.join(', ')}`);
  }
  const pubkey = validateDevicePubkey(input.devicePubkey);
  const now = clock.now();
  const expiresTime = new Date(now.getTime() + DEVICE_LINK_SECONDS * 1000);
  const pollToken = randomHex(32);
  // A clash with another pending code is astronomically rare; the partial unique index catches it.
  for (let attempt = 0; ; attempt++) {
    const code = randomReadableCode(8);
    try {
      await db
        .insertInto('dvl_device_links')
        .values({
          dvl_poll_token_hash: sha256Hex(pollToken),
          dvl_link_code: code,
          dvl_device_name: name,
          dvl_platform: input.platform as Platform,
          dvl_device_pubkey: pubkey,
          dvl_create_time: now,
          dvl_expires_time: expiresTime,
        })
        .execute();
      return { linkCode: formatLinkCode(code), pollToken, expiresTime };
    } catch (e) {
      if (attempt >= 3) throw e;
    }
  }
}

export type PollOutcome =
  | { kind: 'not_found' }
  | { kind: 'pending' }
  | { kind: 'denied' }
  | { kind: 'already_delivered' }
  | { kind: 'approved'; key: IssuedKey; sealedVaultKey: string | null };

/**
 * One poll. The credential is minted on the first poll after approval, in the same transaction that
 * moves the ceremony to 'delivered', so it is handed out exactly once and never stored in the clear. A
 * sealed vault key left by the approving user is handed out with it and scrubbed in that transaction.
 */
export async function pollDeviceLink(db: Kysely<DB>, clock: Clock, pollToken: string, sessionLifetimeDays: number): Promise<PollOutcome> {
  if (!/^[0-9a-f]{64}$/.test(pollToken)) return { kind: 'not_found' };
  const now = clock.now();
  return db.transaction().execute(async (trx) => {
    const row = await trx
      .selectFrom('dvl_device_links')
      .selectAll()
      .where('dvl_poll_token_hash', '=', sha256Hex(pollToken))
      .forUpdate()
      .executeTakeFirst();
    if (!row) return { kind: 'not_found' as const };
    if (row.dvl_status === 'delivered') return { kind: 'already_delivered' as const };
    if (row.dvl_expires_time.getTime() <= now.getTime()) return { kind: 'not_found' as const };
    if (row.dvl_status === 'pending') return { kind: 'pending' as const };
    if (row.dvl_status === 'denied') return { kind: 'denied' as const };
    const key = await createSessionKey(trx, {
      userId: row.dvl_usr_user_id!,
      name: row.dvl_device_name.slice(0, 100),
      now,
      expiresTime: new Date(now.getTime() + sessionLifetimeDays * 86_400_000),
    });
    await trx
      .updateTable('dvl_device_links')
      .set({ dvl_status: 'delivered', dvl_apk_api_key_id: key.apiKeyId, dvl_delivered_time: now, dvl_sealed_vault_key: null })
      .where('dvl_device_link_id', '=', row.dvl_device_link_id)
      .execute();
    return { kind: 'approved' as const, key, sealedVaultKey: row.dvl_sealed_vault_key };
  });
}

export interface PendingLink {
  id: number;
  deviceName: string;
  platform: Platform;
  /** The device's X25519 public key (base64), when it sent one: the key a vault secret is sealed to. */
  devicePubkey: string | null;
}

export async function findPendingLink(db: Kysely<DB>, clock: Clock, code: string): Promise<PendingLink | null> {
  const normalised = normaliseLinkCode(code);
  if (!/^[A-Z0-9]{8}$/.test(normalised)) return null;
  const row = await db
    .selectFrom('dvl_device_links')
    .select(['dvl_device_link_id', 'dvl_device_name', 'dvl_platform', 'dvl_device_pubkey'])
    .where('dvl_link_code', '=', normalised)
    .where('dvl_status', '=', 'pending')
    .where('dvl_expires_time', '>', clock.now())
    .executeTakeFirst();
  return row ? { id: row.dvl_device_link_id, deviceName: row.dvl_device_name, platform: row.dvl_platform, devicePubkey: row.dvl_device_pubkey } : null;
}

/**
 * The signed-in user approves (or refuses) a pending ceremony; false when it is no longer pending. An
 * approval may carry the user's vault secret sealed to the device's key (only a refusal drops it).
 */
export async function decideDeviceLink(db: Kysely<DB>, clock: Clock, linkId: number, userId: number, approve: boolean, sealedVaultKey: string | null = null): Promise<boolean> {
  const now = clock.now();
  const result = await db
    .updateTable('dvl_device_links')
    .set({ dvl_status: approve ? 'approved' : 'denied', dvl_usr_user_id: userId, dvl_decided_time: now, dvl_sealed_vault_key: approve ? sealedVaultKey : null })
    .where('dvl_device_link_id', '=', linkId)
    .where('dvl_status', '=', 'pending')
    .where('dvl_expires_time', '>', now)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}
