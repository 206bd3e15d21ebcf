import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.js';
import { aeadOpen, aeadSeal, openSealedBox, randomKey, sealToPublicKey } from './crypto.js';
import type { Vault } from './vaults.js';
import type { VaultWindow } from './window.js';

// The one way sealed content is written and read (STYLE: "Sealed data goes through one helper"), so a
// locked record looks the same everywhere: its sealed fields null and content_locked true, never an error.
// Each record has a random content key sealed to its owner's vault public key; each field is AES-256-GCM
// under that key with `{table}:{id}:{column}` as associated data.

/** Where a sealed record lives: its table, id and owner, and its sealed content key. */
export interface SealedRecord {
  table: string;
  id: number | string;
  ownerUserId: number;
  sealedKey: string;
}

/** The caller's means of opening sealed content: the request's window and the acting user. */
export interface SealedReader {
  db: Kysely<DB>;
  window: VaultWindow | null;
  userId: number | null;
}

const keyAd = (r: Pick<SealedRecord, 'table' | 'id'>) => `${r.table}:${r.id}:key`;
const fieldAd = (r: Pick<SealedRecord, 'table' | 'id'>, column: string) => `${r.table}:${r.id}:${column}`;

/** A fresh content key for a new record, and its sealed form to store beside the record. */
export function newContentKey(vault: Pick<Vault, 'publicKey'>, record: { table: string; id: number | string }): { contentKey: Buffer; sealedKey: string } {
  const contentKey = randomKey();
  return { contentKey, sealedKey: sealToPublicKey(vault.publicKey, contentKey, keyAd(record)) };
}

export function sealField(contentKey: Buffer, record: { table: string; id: number | string }, column: string, value: string | Buffer): string {
  return aeadSeal(contentKey, typeof value === 'string' ? Buffer.from(value, 'utf8') : value, fieldAd(record, column));
}

/** The record's content key, when the reader owns it and their window is open (counts as a decrypt). */
export async function contentKeyOf(record: SealedRecord, reader: SealedReader): Promise<Buffer | null> {
  if (!reader.window || reader.userId !== record.ownerUserId) return null;
  const open = await reader.window.unsealFor(reader.db, record.ownerUserId);
  return open ? openSealedBox(open.secretKey, record.sealedKey, keyAd(record)) : null;
}

/** The record's content key opened with a vault secret the caller already holds (an open window's). */
export function openContentKey(record: Pick<SealedRecord, 'table' | 'id' | 'sealedKey'>, secretKey: Buffer): Buffer | null {
  return openSealedBox(secretKey, record.sealedKey, keyAd(record));
}

/** Re-seals a record's content key from the old secret to a new public key (a rotation). */
export function resealContentKey(record: Pick<SealedRecord, 'table' | 'id' | 'sealedKey'>, oldSecretKey: Buffer, newPublicKey: Buffer): string | null {
  const contentKey = openSealedBox(oldSecretKey, record.sealedKey, keyAd(record));
  return contentKey ? sealToPublicKey(newPublicKey, contentKey, keyAd(record)) : null;
}

export type SealedRead<F extends string> = { [K in F]: string | null } & { content_locked: boolean };

/**
 * The sealed fields of a record, decrypted; or every one null with content_locked true when the reader
 * cannot open them now (locked, another owner's content, or a key of a retired generation).
 */
export async function read<F extends string>(record: SealedRecord, values: Record<F, string | null>, fields: readonly F[], reader: SealedReader): Promise<SealedRead<F>> {
  const locked = () => Object.assign(Object.fromEntries(fields.map((f) => [f, null])), { content_locked: true }) as SealedRead<F>;
  const contentKey = await contentKeyOf(record, reader);
  if (!contentKey) return locked();
  const out: Record<string, string | null> = {};
  for (const f of fields) {
    const sealed = values[f];
    if (sealed === null) {
      out[f] = null;
      continue;
    }
    const plain = aeadOpen(contentKey, sealed, fieldAd(record, f));
    if (!plain) return locked();
    out[f] = plain.toString('utf8');
  }
  return Object.assign(out, { content_locked: false }) as SealedRead<F>;
}

export const sealed = { read, sealField, newContentKey, contentKeyOf, openContentKey, resealContentKey };
