import { createHash, createPublicKey, verify, type KeyObject } from 'node:crypto';

/** The first line of every signed agent message; a new layout gets a new tag. */
export const MESSAGE_TAG = 'gatehouse-agent-v1';
/** A request whose timestamp differs from the server's clock by more than this is refused. */
export const MAX_SKEW_SECONDS = 300;

/** DER prefix of an Ed25519 SubjectPublicKeyInfo; the raw 32-byte key follows it. */
const ED25519_SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

export interface SignedParts {
  method: string;
  /** The endpoint's fixed path, e.g. '/api/v1/agent/claim' (never the URL as sent: no query string). */
  path: string;
  nodeId: string;
  timestamp: string;
  nonce: string;
  body: Buffer;
}

/** The seven lines an agent signs, joined by '\n'. */
export function canonicalMessage(p: SignedParts): string {
  const bodyHash = createHash('sha256').update(p.body).digest('hex');
  return [MESSAGE_TAG, p.method.toUpperCase(), p.path, p.nodeId, p.timestamp, p.nonce, bodyHash].join('\n');
}

/** The one spelling of a raw key that is stored and compared: standard base64 of its 32 bytes, padded. */
export function canonicalPublicKey(raw: Buffer): string {
  return raw.toString('base64');
}

/**
 * The raw 32-byte key of a base64 string, or null when it is not exactly that. Base64 has several
 * spellings of 32 bytes (the last character's two spare bits are ignored by decoders): callers store and
 * compare canonicalPublicKey of the result, never the string as sent.
 */
export function rawPublicKey(base64: string): Buffer | null {
  if (!/^[A-Za-z0-9+/]{43}=$/.test(base64)) return null;
  const raw = Buffer.from(base64, 'base64');
  return raw.length === 32 ? raw : null;
}

export function publicKeyObject(raw: Buffer): KeyObject {
  return createPublicKey({ key: Buffer.concat([ED25519_SPKI_PREFIX, raw]), format: 'der', type: 'spki' });
}

/** What an operator compares with the agent's own print-out: 'SHA256:' and the unpadded base64 of the key's SHA-256 (as ssh-keygen shows keys). */
export function fingerprint(raw: Buffer): string {
  return `SHA256:${createHash('sha256').update(raw).digest('base64').replace(/=+$/, '')}`;
}

/** Whether `signatureBase64` is the node's Ed25519 signature of the canonical message. */
export function verifySignature(publicKeyBase64: string, parts: SignedParts, signatureBase64: string): boolean {
  const raw = rawPublicKey(publicKeyBase64);
  if (!raw || !/^[A-Za-z0-9+/]{86}==$/.test(signatureBase64)) return false;
  const signature = Buffer.from(signatureBase64, 'base64');
  if (signature.length !== 64) return false;
  try {
    return verify(null, Buffer.from(canonicalMessage(parts), 'utf8'), publicKeyObject(raw), signature);
  } catch {
    return false;
  }
}
