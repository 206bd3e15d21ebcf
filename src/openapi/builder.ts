import { API_VERSION } from '../http/envelope.js';
import { ERROR_TYPES, type ErrorRow } from './errors.js';
import type { JsonSchema } from './json-schema.js';

export type Operation = Record<string, unknown>;
export type Method = 'get' | 'post' | 'put' | 'delete';

const JSON_TYPE = 'application/json';
export const ref = (kind: 'schemas' | 'responses' | 'parameters', name: string) => ({ $ref: `#/components/${kind}/${name}` });

/** Who may call an operation, as OpenAPI security requirements (alternatives; each one's schemes together). */
type Security = Array<Record<string, string[]>>;
const KEYS = { publicKey: [], secretKey: [] };
const BROWSER = { sessionCookie: [], csrfHeader: [] };
export const SECURITY: Record<'none' | 'keys' | 'browser' | 'keysOrBrowser', Security> = {
  none: [],
  keys: [KEYS],
  browser: [BROWSER],
  keysOrBrowser: [KEYS, BROWSER],
};

/** The parts every document shares: envelopes, security schemes, the client-version headers. */
function baseComponents(): Record<string, Record<string, unknown>> {
  return {
    schemas: {
      SuccessEnvelope: {
        type: 'object',
        required: ['api_version', 'success_message', 'data'],
        properties: {
          api_version: { const: API_VERSION },
          success_message: { type: 'string' },
          data: { type: ['object', 'array'], additionalProperties: true },
          redirect: { type: 'string', description: 'where the web flow would have redirected (actions only; informational)' },
        },
      },
      CollectionEnvelope: {
        type: 'object',
        required: ['api_version', 'success_message', 'data', 'num_results', 'page', 'numperpage'],
        properties: {
          api_version: { const: API_VERSION },
          success_message: { type: 'string' },
          data: { type: 'array' },
          num_results: { type: 'integer', minimum: 0, description: 'total rows matching after owner scoping' },
          page: { type: 'integer', minimum: 0 },
          numperpage: { type: 'integer', minimum: 1 },
        },
      },
      ErrorEnvelope: {
        type: 'object',
        required: ['api_version', 'errortype', 'error', 'data'],
        properties: {
          api_version: { const: API_VERSION },
          errortype: { $ref: '#/components/schemas/ErrorType' },
          error: { type: 'string', description: 'for display and logs only; clients branch on errortype and status' },
          data: { type: 'object', additionalProperties: true },
          validation_errors: { type: 'object', additionalProperties: { type: 'string' }, description: 'only when errortype is ValidationError' },
        },
        if: { properties: { errortype: { const: 'ValidationError' } } },
        then: { required: ['validation_errors'] },
        else: { not: { required: ['validation_errors'] } },
      },
      ErrorType: { type: 'string', enum: [...ERROR_TYPES] },
    },
    securitySchemes: {
      publicKey: { type: 'apiKey', in: 'header', name: 'public_key', description: 'API key: its public half (machine or session key), sent with secret_key' },
      secretKey: { type: 'apiKey', in: 'header', name: 'secret_key', description: 'API key: its secret half' },
      sessionCookie: { type: 'apiKey', in: 'cookie', name: 'gatehouse_session', description: 'the website session cookie (browser session); only when no key headers are sent' },
      csrfHeader: {
        type: 'apiKey',
        in: 'header',
        name: 'X-Service-Csrf',
        description: "the browser session's CSRF token (meta tag service-api-csrf, mirror cookie service_api_csrf); required with the session cookie",
      },
    },
    parameters: {
      ClientApp: { name: 'client_app', in: 'header', required: false, schema: { type: 'string' }, description: 'client identifier for the version handshake' },
      ClientVersion: { name: 'client_version', in: 'header', required: false, schema: { type: 'string' }, description: 'client semver; below the minimum for client_app gives 426 UpgradeRequired' },
      IdempotencyKey: { name: 'Idempotency-Key', in: 'header', required: false, schema: { type: 'string', minLength: 1, maxLength: 255 }, description: 'retry-safe execution: the stored answer is replayed for 24 hours' },
    },
    responses: {},
  };
}

/** Collects paths and shared components; error responses are registered once per status and errortype set. */
export class DocumentBuilder {
  readonly paths: Record<string, Record<string, Operation>> = {};
  readonly components = baseComponents();

  add(path: string, method: Method, op: Operation): void {
    (this.paths[path] ??= {})[method] = { ...op, parameters: [...((op.parameters as unknown[]) ?? []), ref('parameters', 'ClientApp'), ref('parameters', 'ClientVersion')] };
  }

  schema(name: string, schema: JsonSchema): { $ref: string } {
    this.components.schemas![name] = schema;
    return ref('schemas', name);
  }

  /** The error responses for these table rows: one per status, its errortype limited to the rows'. */
  errors(rows: ErrorRow[]): Record<string, { $ref: string }> {
    const byStatus = new Map<number, ErrorRow[]>();
    for (const r of rows) byStatus.set(r.status, [...(byStatus.get(r.status) ?? []).filter((x) => x.errortype !== r.errortype || x.meaning !== r.meaning), r]);
    const out: Record<string, { $ref: string }> = {};
    for (const [status, list] of [...byStatus].sort((a, b) => a[0] - b[0])) {
      const types = [...new Set(list.map((r) => r.errortype))].sort();
      const name = `Error${status}${types.join('')}`;
      const description = list.map((r) => `${r.errortype}: ${r.meaning}`).join('; ');
      const existing = this.components.responses![name] as { description: string } | undefined;
      if (!existing || existing.description.length < description.length) {
        this.components.responses![name] = {
          description,
          ...(status === 429 ? { headers: { 'Retry-After': { schema: { type: 'integer' }, description: 'seconds until a request is counted again' } } } : {}),
          content: {
            [JSON_TYPE]: {
              schema: { allOf: [ref('schemas', 'ErrorEnvelope')], properties: { errortype: { enum: types } } },
            },
          },
        };
      }
      out[String(status)] = ref('responses', name);
    }
    return out;
  }

  /** A 200 answer in the success envelope, its data described by `data`. */
  success(description: string, data: JsonSchema, envelope: 'SuccessEnvelope' | 'CollectionEnvelope' = 'SuccessEnvelope') {
    return { description, content: { [JSON_TYPE]: { schema: { allOf: [ref('schemas', envelope)], properties: { data } } } } };
  }
}
