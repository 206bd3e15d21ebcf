import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { sql, type Kysely } from 'kysely';
import type { DB } from '../db/types.js';
import { randomHex } from '../lib/crypto.js';
import { createMachineKey } from './api-keys.js';
import { createUser } from './users.js';

export const INITIAL_ADMIN_FILE = 'initial-admin.json';
const SUPERADMIN_PERMISSION = 10;
// Serialises first starts of several nodes on one PostgreSQL (an arbitrary constant).
const BOOTSTRAP_LOCK_KEY = 0x6761_7465;

export interface InitialAdmin {
  user_id: number;
  email: string;
  password: string;
  public_key: string;
  secret_key: string;
}

/**
 * On a database without users, creates one superadmin with a random password (flagged to be changed at
 * the first sign-in) and a machine key of capability 4, and writes both to DATA_DIR/initial-admin.json
 * (mode 0600). Returns the file path and the admin's email (never the secrets), or null when users exist.
 */
export async function bootstrapInitialAdmin(db: Kysely<DB>, dataDir: string, now: Date): Promise<{ file: string; email: string } | null> {
  const admin = await db.transaction().execute(async (trx): Promise<InitialAdmin | null> => {
    await sql`select pg_advisory_xact_lock(${BOOTSTRAP_LOCK_KEY})`.execute(trx);
    const existing = await trx.selectFrom('usr_users').select('usr_user_id').limit(1).executeTakeFirst();
    if (existing) return null;
    const email = 'admin@gatehouse.local';
    const password = randomHex(16);
    const userId = await createUser(trx, { email, password, permission: SUPERADMIN_PERMISSION, firstName: 'Admin', lastName: null, now });
    // The generated password sits in a file: the website asks for a new one until it is changed (any
    // password change clears the flag).
    await trx.updateTable('usr_users').set({ usr_force_password_change: true }).where('usr_user_id', '=', userId).execute();
    const key = await createMachineKey(trx, { userId, permission: 4, name: 'initial admin key', now });
    return { user_id: userId, email, password, public_key: key.publicKey, secret_key: key.secretKey };
  });
  if (!admin) return null;
  mkdirSync(dataDir, { recursive: true });
  const file = path.join(dataDir, INITIAL_ADMIN_FILE);
  writeFileSync(file, `${JSON.stringify(admin, null, 2)}\n`, { mode: 0o600 });
  // The mode above applies only when the file is created; an old file keeps its own.
  chmodSync(file, 0o600);
  return { file, email: admin.email };
}
