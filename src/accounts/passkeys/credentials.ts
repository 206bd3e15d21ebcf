import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.js';
import { formatTimestamp } from '../../lib/time.js';

export interface StoredPasskey {
  id: number;
  userId: number;
  label: string | null;
  credentialId: string;
  publicKey: string;
  signCount: number;
  transports: string[];
  prfCapable: boolean;
  createTime: Date;
  lastUsedTime: Date | null;
}

const COLUMNS = [
  'pky_passkey_id',
  'pky_usr_user_id',
  'pky_label',
  'pky_credential_id',
  'pky_public_key',
  'pky_sign_count',
  'pky_transports',
  'pky_prf_capable',
  'pky_create_time',
  'pky_last_used_time',
] as const;

type Row = {
  pky_passkey_id: number;
  pky_usr_user_id: number;
  pky_label: string | null;
  pky_credential_id: string;
  pky_public_key: string;
  pky_sign_count: number;
  pky_transports: string[];
  pky_prf_capable: boolean;
  pky_create_time: Date;
  pky_last_used_time: Date | null;
};

function fromRow(r: Row): StoredPasskey {
  return {
    id: Number(r.pky_passkey_id),
    userId: Number(r.pky_usr_user_id),
    label: r.pky_label,
    credentialId: r.pky_credential_id,
    publicKey: r.pky_public_key,
    signCount: Number(r.pky_sign_count),
    transports: Array.isArray(r.pky_transports) ? r.pky_transports : [],
    prfCapable: r.pky_prf_capable,
    createTime: r.pky_create_time,
    lastUsedTime: r.pky_last_used_time,
  };
}

/** A user's live passkeys, oldest first. */
export async function passkeysOf(db: Kysely<DB>, userId: number): Promise<StoredPasskey[]> {
  const rows = await db
    .selectFrom('pky_passkeys')
    .select(COLUMNS)
    .where('pky_usr_user_id', '=', userId)
    .where('pky_delete_time', 'is', null)
    .orderBy('pky_passkey_id')
    .execute();
  return rows.map(fromRow);
}

/** A live passkey by its credential id, with its owner (who must still be an enabled, undeleted user). */
export async function passkeyByCredentialId(db: Kysely<DB>, credentialId: string): Promise<StoredPasskey | null> {
  const row = await db
    .selectFrom('pky_passkeys')
    .innerJoin('usr_users', 'usr_user_id', 'pky_usr_user_id')
    .select(COLUMNS)
    .where('pky_credential_id', '=', credentialId)
    .where('pky_delete_time', 'is', null)
    .where('usr_delete_time', 'is', null)
    .where('usr_is_disabled', '=', false)
    .executeTakeFirst();
  return row ? fromRow(row) : null;
}

export async function passkeyOfUser(db: Kysely<DB>, userId: number, passkeyId: number): Promise<StoredPasskey | null> {
  const row = await db
    .selectFrom('pky_passkeys')
    .select(COLUMNS)
    .where('pky_passkey_id', '=', passkeyId)
    .where('pky_usr_user_id', '=', userId)
    .where('pky_delete_time', 'is', null)
    .executeTakeFirst();
  return row ? fromRow(row) : null;
}

export async function insertPasskey(
  db: Kysely<DB>,
  input: { userId: number; label: string; credentialId: string; publicKey: string; signCount: number; transports: string[]; aaguid: string; backedUp: boolean; prfCapable: boolean; now: Date },
): Promise<StoredPasskey> {
  const row = await db
    .insertInto('pky_passkeys')
    .values({
      pky_usr_user_id: input.userId,
      pky_label: input.label,
      pky_credential_id: input.credentialId,
      pky_public_key: input.publicKey,
      pky_sign_count: input.signCount,
      pky_transports: JSON.stringify(input.transports),
      pky_aaguid: input.aaguid,
      pky_backed_up: input.backedUp,
      pky_prf_capable: input.prfCapable,
      pky_create_time: input.now,
      pky_update_time: input.now,
    })
    .returning(COLUMNS)
    .executeTakeFirstOrThrow();
  return fromRow(row);
}

/** Records a successful assertion: the authenticator's new counter and the time. */
export async function touchPasskey(db: Kysely<DB>, passkeyId: number, signCount: number, now: Date): Promise<void> {
  await db.updateTable('pky_passkeys').set({ pky_sign_count: signCount, pky_last_used_time: now }).where('pky_passkey_id', '=', passkeyId).execute();
}

export async function renamePasskey(db: Kysely<DB>, passkeyId: number, label: string, now: Date): Promise<void> {
  await db.updateTable('pky_passkeys').set({ pky_label: label, pky_update_time: now }).where('pky_passkey_id', '=', passkeyId).execute();
}

export async function revokePasskey(db: Kysely<DB>, passkeyId: number, now: Date): Promise<void> {
  await db.updateTable('pky_passkeys').set({ pky_delete_time: now, pky_update_time: now }).where('pky_passkey_id', '=', passkeyId).where('pky_delete_time', 'is', null).execute();
}

/** What the API shows of a passkey: never the credential material. */
export function passkeySummary(p: StoredPasskey) {
  return {
    passkey_id: p.id,
    label: p.label,
    prf_capable: p.prfCapable,
    create_time: formatTimestamp(p.createTime),
    last_used_time: p.lastUsedTime ? formatTimestamp(p.lastUsedTime) : null,
  };
}
