import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.js';

// An endpoint's signing secret must be readable to sign (Standard Webhooks is an HMAC), so it cannot be
// hashed. It is sealed with AES-256-GCM under one key kept in its own table (whk_webhook_keys, created on
// first use): the endpoint rows, their exports and anything that lists them hold only ciphertext. Whoever
// reads the whole database (a backup) reads the key too; that is the same protection the service's other
// server secrets (the payment providers' secrets, the SMTP password) have.

const PREFIX = 'whsec_';
const SEALED_VERSION = 'v1';

/** A new endpoint secret: `whsec_` and base64 of 32 random bytes (Standard Webhooks). */
export function newWebhookSecret(): string {
  return PREFIX + randomBytes(32).toString('base64');
}

/** The HMAC key a secret stands for: the bytes after `whsec_`. */
export function secretKeyBytes(secret: string): Buffer {
  return Buffer.from(secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret, 'base64');
}

/** Seals and opens endpoint secrets with the database's webhook key. */
export class SecretBox {
  private constructor(private readonly key: Buffer) {}

  /** The key, created on first use; two nodes creating it at once keep whichever row was written first. */
  static async open(db: Kysely<DB>): Promise<SecretBox> {
    const existing = await db.selectFrom('whk_webhook_keys').select('whk_key').where('whk_webhook_key_id', '=', 1).executeTakeFirst();
    if (existing) return new SecretBox(Buffer.from(existing.whk_key, 'base64'));
    await db
      .insertInto('whk_webhook_keys')
      .values({ whk_webhook_key_id: 1, whk_key: randomBytes(32).toString('base64') })
      .onConflict((oc) => oc.column('whk_webhook_key_id').doNothing())
      .execute();
    const row = await db.selectFrom('whk_webhook_keys').select('whk_key').where('whk_webhook_key_id', '=', 1).executeTakeFirstOrThrow();
    return new SecretBox(Buffer.from(row.whk_key, 'base64'));
  }

  seal(secret: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const body = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
    return `${SEALED_VERSION}.${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64')}`;
  }

  open(sealed: string): string {
    const [version, b64] = sealed.split('.', 2);
    if (version !== SEALED_VERSION || !b64) throw new Error('webhook secret: unknown sealing');
    const raw = Buffer.from(b64, 'base64');
    const decipher = createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, 12));
    decipher.setAuthTag(raw.subarray(12, 28));
    return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
  }
}
