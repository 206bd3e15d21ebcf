import { createHash, createPublicKey, verify, type KeyObject } from 'node:crypto';
import { isIP } from 'node:net';
import { validationError } from '../../../http/errors.js';

/** What a relay signs: this line, then the report's JSON (keys in REPORT_KEYS order, as JSON.stringify writes it). */
export const BIRTH_SIGNATURE_PREFIX = 'gatehouse-relay:born:v1\n';
export const REPORT_KEYS = ['run_id', 'public_ip', 'identity_public_key', 'identity_fingerprint', 'relay_version'] as const;

export interface BirthReport {
  run_id: number;
  public_ip: string;
  identity_public_key: string;
  identity_fingerprint: string;
  relay_version: string;
}

export interface BirthRequest {
  report: BirthReport;
  signature: Buffer;
  /** The identity key, parsed from the report's SPKI DER. */
  key: KeyObject;
  spki: Buffer;
}

const BASE64_RE = /^[A-Za-z0-9+/]+={0,2}$/;
const VERSION_RE = /^[A-Za-z0-9][A-Za-z0-9._+-]{0,63}$/;

function base64(value: string): Buffer | null {
  if (value.length % 4 !== 0 || !BASE64_RE.test(value)) return null;
  return Buffer.from(value, 'base64');
}

/**
 * The body `{report: {...}, signature}` checked field by field: any shape problem is a 422 ValidationError
 * naming the fields (the report's extra keys too: a relay signs exactly the five keys, so nothing unsigned
 * is accepted). The identity key must be an Ed25519 public key in SPKI DER.
 */
export function parseBirthRequest(body: unknown): BirthRequest {
  const errors: Record<string, string> = {};
  const b = typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
  const r = typeof b.report === 'object' && b.report !== null && !Array.isArray(b.report) ? (b.report as Record<string, unknown>) : null;
  if (!r) errors.report = 'is required: an object with run_id, public_ip, identity_public_key, identity_fingerprint, relay_version';
  for (const key of Object.keys(b)) if (key !== 'report' && key !== 'signature') errors[key] = 'is not a field of a birth report request';
  let signature: Buffer | null = null;
  if (typeof b.signature !== 'string' || (signature = base64(b.signature)) === null || signature.length !== 64) {
    errors.signature = 'must be a base64 Ed25519 signature (64 bytes)';
  }
  let key: KeyObject | null = null;
  let spki: Buffer | null = null;
  if (r) {
    for (const k of Object.keys(r)) if (!(REPORT_KEYS as readonly string[]).includes(k)) errors[`report.${k}`] = 'is not a field of a birth report';
    if (typeof r.run_id !== 'number' || !Number.isSafeInteger(r.run_id) || r.run_id < 1) errors['report.run_id'] = 'must be the run id (a positive integer)';
    if (typeof r.public_ip !== 'string' || isIP(r.public_ip) === 0) errors['report.public_ip'] = 'must be an IPv4 or IPv6 address';
    if (typeof r.identity_fingerprint !== 'string' || base64(r.identity_fingerprint)?.length !== 32) {
      errors['report.identity_fingerprint'] = 'must be the base64 SHA-256 of the identity key\'s SPKI';
    }
    if (typeof r.relay_version !== 'string' || !VERSION_RE.test(r.relay_version)) errors['report.relay_version'] = 'must be a version string of at most 64 characters';
    spki = typeof r.identity_public_key === 'string' && r.identity_public_key.length <= 200 ? base64(r.identity_public_key) : null;
    if (spki) {
      try {
        key = createPublicKey({ key: spki, format: 'der', type: 'spki' });
      } catch {
        key = null;
      }
    }
    if (!key || key.asymmetricKeyType !== 'ed25519') errors['report.identity_public_key'] = 'must be the base64 SPKI DER of an Ed25519 public key';
  }
  if (Object.keys(errors).length > 0 || !r || !key || !spki || !signature) throw validationError(errors);
  const report: BirthReport = {
    run_id: r.run_id as number,
    public_ip: r.public_ip as string,
    identity_public_key: r.identity_public_key as string,
    identity_fingerprint: r.identity_fingerprint as string,
    relay_version: r.relay_version as string,
  };
  return { report, signature, key, spki };
}

/** The bytes a relay signs for its report. */
export function birthMessage(report: BirthReport): Buffer {
  const ordered = Object.fromEntries(REPORT_KEYS.map((k) => [k, report[k]]));
  return Buffer.from(BIRTH_SIGNATURE_PREFIX + JSON.stringify(ordered), 'utf8');
}

export function signatureVerifies(request: BirthRequest): boolean {
  return verify(null, birthMessage(request.report), request.key, request.signature);
}

/** The identity fingerprint: base64 of the SHA-256 of the key's SPKI DER. */
export function spkiFingerprint(spki: Buffer): string {
  return createHash('sha256').update(spki).digest('base64');
}

/**
 * An address in one spelling, so the report's and the request's compare: IPv4-mapped IPv6 (::ffff:a.b.c.d)
 * is the IPv4 address, and IPv6 takes its canonical (compressed, lowercase) form.
 */
export function normaliseIp(ip: string): string {
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(ip);
  if (mapped) return mapped[1]!;
  if (isIP(ip) !== 6) return ip;
  const canonical = new URL(`http://[${ip}]/`).hostname.slice(1, -1);
  const hex = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(canonical);
  if (!hex) return canonical;
  const [hi, lo] = [parseInt(hex[1]!, 16), parseInt(hex[2]!, 16)];
  return [hi >> 8, hi & 255, lo >> 8, lo & 255].join('.');
}
