import type { Kysely } from 'kysely';
import type { ApiKeyType, DB } from '../db/types.js';
import { randomHex, sha256Hex } from '../lib/crypto.js';
import { hashSecret } from './passwords.js';

export const SESSION_KEY_PREFIX = 'sess_';
const MACHINE_KEY_PREFIX = 'key_';

export interface IssuedKey {
  apiKeyId: number;
  publicKey: string;
  /** Shown to the caller once; only its hash is stored. */
  secretKey: string;
  expiresTime: Date | null;
}

export interface MachineKeyInput {
  userId: number;
  permission: number;
  name?: string | null;
  ipRestriction?: string | null;
  startTime?: Date | null;
  expiresTime?: Date | null;
  active?: boolean;
  now: Date;
}

export class ApiKeyInputError extends Error {}

/** Normalises a comma-separated IP list; refuses anything that is not an IPv4/IPv6 address. */
export function normaliseIpRestriction(raw: string | null | undefined): string | null {
  if (raw === null || raw === undefined || raw.trim() === '') return null;
  const ips = raw.split(',').map((s) => s.trim()).filter(Boolean);
  for (const ip of ips) {
    if (!/^[0-9a-fA-F:.]+$/.test(ip) || ip.length > 45) throw new ApiKeyInputError(`'${ip}' is not an IP address`);
  }
  const joined = ips.join(',');
  if (joined.length > 255) throw new ApiKeyInputError('ip restriction list is too long');
  return joined;
}

/** A machine key: provisioned by an administrator; its secret is stored as an argon2id hash. */
export async function createMachineKey(db: Kysely<DB>, input: MachineKeyInput): Promise<IssuedKey> {
  if (!Number.isInteger(input.permission) || input.permission < 1 || input.permission > 4) {
    throw new ApiKeyInputError('permission must be 1, 2, 3 or 4');
  }
  if (input.startTime && input.expiresTime && input.expiresTime <= input.startTime) {
    throw new ApiKeyInputError('expires time must be after start time');
  }
  const secretKey = randomHex(32);
  const publicKey = MACHINE_KEY_PREFIX + randomHex(12);
  const row = await db
    .insertInto('apk_api_keys')
    .values({
      apk_usr_user_id: input.userId,
      apk_name: input.name?.slice(0, 100) ?? null,
      apk_public_key: publicKey,
      apk_secret_hash: await hashSecret(secretKey),
      apk_type: 'machine',
      apk_permission: input.permission,
      apk_ip_restriction: normaliseIpRestriction(input.ipRestriction),
      apk_start_time: input.startTime ?? null,
      apk_expires_time: input.expiresTime ?? null,
      apk_is_active: input.active ?? true,
      apk_create_time: input.now,
      apk_update_time: input.now,
    })
    .returning('apk_api_key_id')
    .executeTakeFirstOrThrow();
  return { apiKeyId: row.apk_api_key_id, publicKey, secretKey, expiresTime: input.expiresTime ?? null };
}

/** A session key: issued by login; a random 256-bit secret stored as SHA-256; always capability 4. */
export async function createSessionKey(
  db: Kysely<DB>,
  input: { userId: number; name: string | null; now: Date; expiresTime: Date },
): Promise<IssuedKey> {
  const secretKey = randomHex(32);
  const publicKey = SESSION_KEY_PREFIX + randomHex(12);
  const row = await db
    .insertInto('apk_api_keys')
    .values({
      apk_usr_user_id: input.userId,
      apk_name: input.name,
      apk_public_key: publicKey,
      apk_secret_hash: sha256Hex(secretKey),
      apk_type: 'session',
      apk_permission: 4,
      apk_is_active: true,
      apk_expires_time: input.expiresTime,
      apk_create_time: input.now,
      apk_update_time: input.now,
    })
    .returning('apk_api_key_id')
    .executeTakeFirstOrThrow();
  return { apiKeyId: row.apk_api_key_id, publicKey, secretKey, expiresTime: input.expiresTime };
}

/** Revokes one key by soft delete; returns false when it was already revoked or never existed. */
export async function revokeKey(db: Kysely<DB>, apiKeyId: number, now: Date): Promise<boolean> {
  const result = await db
    .updateTable('apk_api_keys')
    .set({ apk_delete_time: now, apk_update_time: now })
    .where('apk_api_key_id', '=', apiKeyId)
    .where('apk_delete_time', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** On a password change every session key of the owner is revoked; machine keys are untouched. */
export async function revokeSessionKeysOf(db: Kysely<DB>, userId: number, now: Date): Promise<number> {
  const result = await db
    .updateTable('apk_api_keys')
    .set({ apk_delete_time: now, apk_update_time: now })
    .where('apk_usr_user_id', '=', userId)
    .where('apk_type', '=', 'session' satisfies ApiKeyType)
    .where('apk_delete_time', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}
