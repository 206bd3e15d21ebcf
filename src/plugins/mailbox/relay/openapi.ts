import { SECURITY } from '../../../openapi/builder.js';
import type { FixedEndpoint } from '../../../openapi/endpoints.js';
import { ERROR_ROWS, type ErrorRow } from '../../../openapi/errors.js';
import { timestampSchema, type JsonSchema } from '../../../openapi/json-schema.js';
import { BIRTH_SIGNATURE_PREFIX } from './birth.js';

const str: JsonSchema = { type: 'string' };
const tokenHeader = { name: 'X-Service-Relay-Run-Token', in: 'header', required: true, schema: str, description: 'The run token printed once by `gatehouse relay run create`' };
const refused: ErrorRow = { status: 403, errortype: 'AuthenticationError', meaning: 'the run token or run is bad (missing, wrong, expired, spent, unknown run): one identical answer' };
const METER = 'Dispatched before key authentication; metered by the api_relay bucket (api_relay_rate_limit_requests per api_relay_rate_limit_window, per IP). Served only while the mailbox plugin is active.';

/** The relay channel in the OpenAPI document (DESIGN 11). */
export const relayEndpoints: FixedEndpoint[] = [
  {
    path: '/relay/bundle', method: 'get', operationId: 'relayBundle', tag: 'Relay channel', summary: 'A newly created mail relay fetches its bundle',
    security: SECURITY.none,
    parameters: [
      { name: 'run', in: 'query', required: true, schema: { type: 'integer', minimum: 1 } },
      { name: 'sha256', in: 'query', required: true, schema: { type: 'string', pattern: '^[0-9a-f]{64}$' }, description: 'the bundle\'s SHA-256 as printed at run creation' },
      tokenHeader,
    ],
    data: {}, streams: 'application/gzip',
    errors: [...ERROR_ROWS.transport, refused, { status: 409, errortype: 'ActionError', meaning: "the run's bundle has a different SHA-256 (data.reason 'bundle_sha256_mismatch')" }, ...ERROR_ROWS.validation],
    description: `Streams the bundle with Cache-Control: no-store while the run token is live and unspent. ${METER}`,
  },
  {
    path: '/relay/born', method: 'post', operationId: 'relayBorn', tag: 'Relay channel', summary: 'The relay posts its signed birth report',
    security: SECURITY.none, parameters: [tokenHeader],
    body: {
      required: true,
      content: {
        'application/json': {
          type: 'object', required: ['report', 'signature'], additionalProperties: false,
          properties: {
            report: {
              type: 'object', additionalProperties: false,
              required: ['run_id', 'public_ip', 'identity_public_key', 'identity_fingerprint', 'relay_version'],
              properties: {
                run_id: { type: 'integer', minimum: 1 },
                public_ip: { type: 'string', description: 'the relay\'s address; must be the address the report comes from' },
                identity_public_key: { type: 'string', description: 'base64 of the Ed25519 identity key\'s SPKI DER' },
                identity_fingerprint: { type: 'string', description: 'base64 SHA-256 of that SPKI DER' },
                relay_version: { type: 'string', maxLength: 64 },
              },
            },
            signature: { type: 'string', description: `base64 Ed25519 signature by the identity key over ${JSON.stringify(BIRTH_SIGNATURE_PREFIX)} followed by the report's JSON (keys in the order above, no spaces)` },
          },
        },
      },
    },
    data: {
      type: 'object', required: ['run_id', 'believed', 'public_ip', 'identity_fingerprint', 'relay_version', 'born_time'],
      properties: { run_id: { type: 'integer' }, believed: { const: true }, public_ip: str, identity_fingerprint: str, relay_version: str, born_time: timestampSchema() },
    },
    errors: [
      ...ERROR_ROWS.transport, ...ERROR_ROWS.body, refused, ...ERROR_ROWS.validation,
      { status: 401, errortype: 'AuthenticationError', meaning: 'the signature does not verify with identity_public_key' },
      { status: 422, errortype: 'ActionError', meaning: "not believed: data.reason 'public_ip_mismatch', 'fingerprint_mismatch', or 'ping_unanswered' (the relay did not answer a TLS ping pinned to its key; the token stays live)" },
    ],
    description: `Believed only for a live, unspent run token, from public_ip itself, with a matching fingerprint, once a ping pinned to that fingerprint answers; believing it spends the token. ${METER}`,
  },
];
