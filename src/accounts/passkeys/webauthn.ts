/**
 * @simplewebauthn/server, loaded at the first ceremony rather than at start: with the certificate
 * libraries it brings it takes about 0.4 s to load, which every CLI command would otherwise pay.
 */
export function webauthn(): Promise<typeof import('@simplewebauthn/server')> {
  return import('@simplewebauthn/server');
}
