import { SECURITY, type DocumentBuilder, type Method } from './builder.js';
import { ERROR_ROWS, type ErrorRow } from './errors.js';
import { timestampSchema, type JsonSchema } from './json-schema.js';

/**
 * The API's fixed endpoints (auth, app, webhook and upload channels): hand-written routes with no
 * registry behind them, so their shapes are declared here, once. A test holds this list to the routes
 * the server actually registers.
 */
export interface FixedEndpoint {
  path: string;
  method: Method;
  operationId: string;
  tag: string;
  summary: string;
  security: Array<Record<string, string[]>>;
  parameters?: unknown[];
  body?: { required: boolean; content: Record<string, JsonSchema> };
  data: JsonSchema;
  /** A 200 that streams bytes of this media type with no envelope (data is then unused). */
  streams?: string;
  errors: ErrorRow[];
  /** Answered outside the general bucket (its own rate limit) or before authentication: said in the text. */
  description?: string;
}

const obj = (properties: Record<string, JsonSchema>, required = Object.keys(properties)): JsonSchema => ({ type: 'object', properties, required });
const str: JsonSchema = { type: 'string' };
const int: JsonSchema = { type: 'integer' };

const sessionUser = obj({
  user_id: int,
  display_name: str,
  email: str,
  permission: int,
  tier: { type: ['object', 'null'], properties: { name: str, tier_level: int, features: { type: 'object', additionalProperties: true } } },
});

const uploadProgress = obj({ received_bytes: { type: 'integer', minimum: 0 }, expected_bytes: { type: 'integer', minimum: 0 }, complete: { type: 'boolean' }, expires_time: timestampSchema() });
const tokenParameter = (name: string) => ({ name, in: 'path', required: true, schema: { type: 'string', minLength: 1, maxLength: 200 } });
const keyed = [...ERROR_ROWS.transport, ...ERROR_ROWS.authentication];

const ENDPOINTS: FixedEndpoint[] = [
  {
    path: '/auth/login', method: 'post', operationId: 'login', tag: 'Auth', summary: 'Sign in with email and password: issues a session key',
    security: SECURITY.none,
    body: { required: true, content: { 'application/json': obj({ email: str, password: { type: 'string', format: 'password' }, device_label: { type: 'string', maxLength: 100 } }, ['email', 'password']) } },
    data: obj({ public_key: str, secret_key: { type: 'string', pattern: '^[0-9a-f]{64}$' }, expires_time: timestampSchema(), user: sessionUser }),
    errors: [...keyed, ...ERROR_ROWS.body],
  },
  { path: '/auth/session', method: 'get', operationId: 'getSession', tag: 'Auth', summary: 'The signed-in user', security: SECURITY.keysOrBrowser, data: sessionUser, errors: keyed },
  {
    path: '/auth/logout', method: 'post', operationId: 'logout', tag: 'Auth', summary: 'Revoke the presented session key (machine keys and browser sessions get 403)',
    security: SECURITY.keys, data: obj({ revoked: { const: true }, public_key: str }), errors: [...keyed, ...ERROR_ROWS.body],
  },
  {
    path: '/auth/web_session', method: 'post', operationId: 'openWebSession', tag: 'Auth', summary: 'A one-time URL that signs a browser in as the session key\'s user',
    security: SECURITY.keys,
    body: { required: false, content: { 'application/json': obj({ target: { type: 'string', default: '/', description: 'same-origin relative path' } }, []) } },
    data: obj({ bridge_url: str, expires_in: { const: 60 } }), errors: [...keyed, ...ERROR_ROWS.body],
  },
  {
    path: '/auth/device_link', method: 'post', operationId: 'startDeviceLink', tag: 'Auth', summary: 'Start linking a desktop device; a signed-in user approves it on the website',
    security: SECURITY.none,
    body: { required: true, content: { 'application/json': obj({ device_name: str, platform: { type: 'string', enum: ['macos', 'windows', 'linux'] }, device_pubkey: { type: 'string', description: 'base64 X25519 public key' } }, ['device_name', 'platform']) } },
    data: obj({ link_code: str, poll_token: str, verify_url: str, expires_time: timestampSchema(), poll_after: { const: 3 } }),
    errors: [...ERROR_ROWS.transport, ...ERROR_ROWS.body], description: 'Metered by the device-link bucket.',
  },
  {
    path: '/auth/device_link/{poll_token}', method: 'get', operationId: 'pollDeviceLink', tag: 'Auth', summary: 'Poll a device link: pending, denied, or the credential (first poll after approval only)',
    security: SECURITY.none, parameters: [tokenParameter('poll_token')],
    data: {
      oneOf: [
        obj({ status: { const: 'pending' }, poll_after: int }),
        obj({ status: { const: 'denied' } }),
        obj({ status: { const: 'approved' }, public_key: str, secret_key: str, device_id: int, expires_time: timestampSchema(), sealed_vault_key: str }, ['status', 'public_key', 'secret_key', 'device_id', 'expires_time']),
      ],
    },
    errors: [...ERROR_ROWS.transport, ...ERROR_ROWS.notFound, row409('the credential was already delivered')],
  },
  {
    path: '/app/navigation', method: 'get', operationId: 'appNavigation', tag: 'App', summary: 'The native app\'s profile-menu routing table, filtered for the user (session keys only)',
    security: SECURITY.keys,
    data: obj({ entries: { type: 'array', items: obj({ slug: str, label: str, destination: { type: 'object', required: ['type'], properties: { type: { enum: ['web', 'native'] } } } }) }, tabs: { type: 'array', items: str } }),
    errors: keyed,
  },
  {
    path: '/webhooks/{source}', method: 'post', operationId: 'receiveWebhook', tag: 'Webhooks', summary: 'Payment-provider callback, authenticated by its payload signature',
    security: SECURITY.none, parameters: [{ name: 'source', in: 'path', required: true, schema: str }],
    body: { required: true, content: { 'application/json': { type: 'object', additionalProperties: true }, 'application/octet-stream': { type: 'string', contentMediaType: 'application/octet-stream' } } },
    data: { type: 'object', required: ['duplicate'], properties: { duplicate: { type: 'boolean' } } },
    errors: [...keyed, ...ERROR_ROWS.body, ...ERROR_ROWS.notFound, ...ERROR_ROWS.action],
    description: 'Verified before any state is touched; a duplicate event is acknowledged without processing. Body at most 256 KiB.',
  },
  {
    path: '/drive_upload/{token}', method: 'put', operationId: 'putUploadChunk', tag: 'Drive uploads', summary: 'Send the next chunk of an upload opened by drive_upload_init',
    security: SECURITY.keysOrBrowser,
    parameters: [tokenParameter('token'), { name: 'Content-Range', in: 'header', required: true, schema: { type: 'string', pattern: '^bytes \\d+-\\d+/\\d+$' } }],
    body: { required: true, content: { 'application/octet-stream': { type: 'string', contentMediaType: 'application/octet-stream' } } },
    data: uploadProgress,
    errors: [...keyed, ...ERROR_ROWS.body, ...ERROR_ROWS.requiresSetting, ...ERROR_ROWS.validation, row(404, 'ActionError', 'no such upload of yours, or it expired'),
      row409('the start differs from the server\'s received_bytes (data.received_bytes), or another chunk is being received'), row(408, 'TransactionError', 'the chunk stalled and was discarded')],
    description: 'Metered by the api_upload bucket; needs setting drive_active. The chunk must start at received_bytes and carry at most chunk_bytes (from drive_upload_init).',
  },
  {
    path: '/drive_upload/{token}', method: 'get', operationId: 'getUploadProgress', tag: 'Drive uploads', summary: 'How many bytes of an upload the server holds',
    security: SECURITY.keysOrBrowser, parameters: [tokenParameter('token')], data: uploadProgress,
    errors: [...keyed, ...ERROR_ROWS.requiresSetting, row(404, 'ActionError', 'no such upload of yours, or it expired')],
  },
];

function row(status: number, errortype: ErrorRow['errortype'], meaning: string): ErrorRow {
  return { status, errortype, meaning };
}
function row409(meaning: string): ErrorRow {
  return row(409, 'ActionError', meaning);
}

export const FIXED_ENDPOINTS: ReadonlyArray<Pick<FixedEndpoint, 'path' | 'method'>> = ENDPOINTS;

/** The fixed endpoints, and those of the active plugins' special channels (PluginModule.openApi). */
export function addFixedEndpoints(doc: DocumentBuilder, pluginEndpoints: readonly FixedEndpoint[] = []): void {
  for (const e of [...ENDPOINTS, ...pluginEndpoints]) {
    const ok = e.streams
      ? { description: `${e.summary}: the bytes, with no envelope`, content: { [e.streams]: { schema: { type: 'string', contentMediaType: e.streams } } } }
      : doc.success(e.summary, e.data);
    doc.add(e.path, e.method, {
      operationId: e.operationId,
      tags: [e.tag],
      summary: e.summary,
      ...(e.description ? { description: e.description } : {}),
      security: e.security,
      ...(e.parameters ? { parameters: e.parameters } : {}),
      ...(e.body ? { requestBody: { required: e.body.required, content: Object.fromEntries(Object.entries(e.body.content).map(([type, schema]) => [type, { schema }])) } } : {}),
      responses: { 200: ok, ...doc.errors(e.errors) },
    });
  }
}
