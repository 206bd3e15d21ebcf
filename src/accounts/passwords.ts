import { Algorithm, hash, verify } from '@node-rs/argon2';

// argon2id with the library's defaults (19 MiB, 2 passes): about 10 ms a verification here.
const OPTIONS = { algorithm: Algorithm.Argon2id } as const;

export function hashSecret(plain: string): Promise<string> {
  return hash(plain, OPTIONS);
}

export async function verifySecret(stored: string, plain: string): Promise<boolean> {
  try {
    return await verify(stored, plain);
  } catch {
    return false;
  }
}

let dummyHash: Promise<string> | undefined;
/**
 * Spends one full verification against a hash nobody knows, so a login for an unknown or deleted
 * account takes as long as one with a wrong password.
 */
export async function burnVerification(plain: string): Promise<void> {
  dummyHash ??= hashSecret('gatehouse-timing-equaliser');
  await verifySecret(await dummyHash, plain);
}

export const MIN_PASSWORD_LENGTH = 8;
