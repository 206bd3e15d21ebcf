import { createHash, createSign, generateKeyPairSync, randomBytes, type KeyObject } from 'node:crypto';
import { isoCBOR } from '@simplewebauthn/server/helpers';

/**
 * A software WebAuthn authenticator for HTTP tests: it makes ES256 credentials with a "none" attestation
 * and signs assertions exactly as a real authenticator would, so the server's verification runs for real.
 * (The browser tests use Chromium's virtual authenticator instead.)
 */
export interface SoftCredential {
  id: string;
  privateKey: KeyObject;
  signCount: number;
  userHandle: string;
}

const b64url = (b: Buffer | Uint8Array) => Buffer.from(b).toString('base64url');
const sha256 = (b: Buffer | string) => createHash('sha256').update(b).digest();

function coseKey(publicKey: KeyObject): Uint8Array {
  const jwk = publicKey.export({ format: 'jwk' }) as { x: string; y: string };
  const map = new Map<number, number | Uint8Array>([
    [1, 2],
    [3, -7],
    [-1, 1],
    [-2, Buffer.from(jwk.x, 'base64url')],
    [-3, Buffer.from(jwk.y, 'base64url')],
  ]);
  return isoCBOR.encode(map as never);
}

function clientData(type: 'webauthn.create' | 'webauthn.get', challenge: string, origin: string): Buffer {
  return Buffer.from(JSON.stringify({ type, challenge, origin, crossOrigin: false }));
}

export class SoftAuthenticator {
  readonly credentials: SoftCredential[] = [];

  constructor(
    readonly origin: string,
    readonly rpId: string,
    private readonly opts: { prf?: boolean; userVerified?: boolean } = {},
  ) {}

  /** The JSON startRegistration() would resolve with, for the options the server sent. */
  register(options: { challenge: string; user: { id: string } }): Record<string, unknown> {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const id = randomBytes(16);
    const flags = 0x01 | this.uvFlag(this.opts.userVerified) | 0x40; // user present, user verified, attested credential data
    const counter = Buffer.alloc(4);
    const idLen = Buffer.alloc(2);
    idLen.writeUInt16BE(id.length);
    const authData = Buffer.concat([sha256(this.rpId), Buffer.from([flags]), counter, Buffer.alloc(16), idLen, id, Buffer.from(coseKey(publicKey))]);
    const attestationObject = isoCBOR.encode(new Map<string, unknown>([['fmt', 'none'], ['attStmt', new Map()], ['authData', authData]]) as never);
    const cred: SoftCredential = { id: b64url(id), privateKey, signCount: 0, userHandle: options.user.id };
    this.credentials.push(cred);
    return {
      id: cred.id,
      rawId: cred.id,
      type: 'public-key',
      response: {
        clientDataJSON: b64url(clientData('webauthn.create', options.challenge, this.origin)),
        attestationObject: b64url(attestationObject),
        transports: ['internal'],
      },
      clientExtensionResults: this.opts.prf ? { prf: { enabled: true } } : {},
      authenticatorAttachment: 'platform',
    };
  }

  private uvFlag(verified: boolean | undefined): number {
    return verified === false ? 0 : 0x04;
  }

  /** The JSON startAuthentication() would resolve with; `counter` overrides the next sign count. */
  assert(
    options: { challenge: string },
    cred: SoftCredential = this.credentials[0]!,
    overrides: { counter?: number; origin?: string; userVerified?: boolean } = {},
  ): Record<string, unknown> {
    cred.signCount = overrides.counter ?? cred.signCount + 1;
    const counter = Buffer.alloc(4);
    counter.writeUInt32BE(cred.signCount);
    const authData = Buffer.concat([sha256(this.rpId), Buffer.from([0x01 | this.uvFlag(overrides.userVerified ?? this.opts.userVerified)]), counter]);
    const cdj = clientData('webauthn.get', options.challenge, overrides.origin ?? this.origin);
    const signature = createSign('sha256').update(Buffer.concat([authData, sha256(cdj)])).sign(cred.privateKey);
    return {
      id: cred.id,
      rawId: cred.id,
      type: 'public-key',
      response: {
        clientDataJSON: b64url(cdj),
        authenticatorData: b64url(authData),
        signature: b64url(signature),
        userHandle: cred.userHandle,
      },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
    };
  }
}
