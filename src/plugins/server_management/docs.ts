import type { FixedEndpoint } from '../../openapi/endpoints.js';
import { ERROR_ROWS, type ErrorRow } from '../../openapi/errors.js';
import { SECURITY } from '../../openapi/builder.js';
import type { JsonSchema } from '../../openapi/json-schema.js';
import { AGENT_BODY_LIMIT } from './channel.js';
import { MAX_SKEW_SECONDS, MESSAGE_TAG } from './signature.js';

const obj = (properties: Record<string, JsonSchema>, required = Object.keys(properties)): JsonSchema => ({ type: 'object', properties, required, additionalProperties: false });
const str: JsonSchema = { type: 'string' };
const id: JsonSchema = { type: 'integer', minimum: 1 };
const nodeStatus: JsonSchema = { type: 'string', enum: ['pending', 'approved', 'revoked', 'left'] };
const json = (schema: JsonSchema) => ({ required: false, content: { 'application/json': schema } });

const signedHeaders = [
  { name: 'X-Service-Agent-Node', in: 'header', required: true, schema: { type: 'string', pattern: '^[1-9][0-9]*$' }, description: 'the node id join returned' },
  ...timeHeaders(),
];
const joinHeaders = [
  { name: 'X-Service-Agent-Node', in: 'header', required: true, schema: { type: 'string', const: '0' }, description: '0: a joining node has no id yet' },
  ...timeHeaders(),
];

function timeHeaders() {
  return [
  { name: 'X-Service-Agent-Timestamp', in: 'header', required: true, schema: { type: 'string', pattern: '^[0-9]+$' }, description: `unix seconds; more than ${MAX_SKEW_SECONDS} s from the server's clock is refused` },
  { name: 'X-Service-Agent-Nonce', in: 'header', required: true, schema: { type: 'string', pattern: '^[A-Za-z0-9_-]{16,64}$' }, description: 'unique per request; a nonce seen within the window is refused' },
    { name: 'X-Service-Agent-Signature', in: 'header', required: true, schema: str, description: 'base64 Ed25519 signature of the canonical message' },
  ];
}

const row = (status: number, errortype: ErrorRow['errortype'], meaning: string): ErrorRow => ({ status, errortype, meaning });
const bodyRows = [row(400, 'ValidationError', `body larger than ${AGENT_BODY_LIMIT} bytes, or not a JSON object`), row(422, 'ValidationError', 'an undeclared, missing or invalid field; validation_errors names it')];
const signedRows = [
  ...ERROR_ROWS.transport,
  ...bodyRows,
  row(401, 'AuthenticationError', 'missing or malformed signature headers, clock skew, unknown node, bad signature, or a replayed nonce'),
];
const approvedRows = [...signedRows, row(403, 'AuthenticationError', 'the node is not approved (pending, revoked or left)')];

const SIGNING = `Signed: the Ed25519 signature over seven lines joined by \\n: '${MESSAGE_TAG}', the method, the endpoint's fixed path (e.g. /api/v1/agent/claim), the node id, the timestamp, the nonce, and the hex SHA-256 of the body bytes. Metered by the api_agent bucket (per IP per hour, setting api_agent_rate_limit_requests); a successful claim is not counted.`;
const nodeAnswer = obj({ node_id: id, status: nodeStatus, fingerprint: str });

/** The /agent channel in the API document, while server_management is active. */
export const AGENT_DOCS: FixedEndpoint[] = [
  {
    path: '/agent/join', method: 'post', operationId: 'agentJoin', tag: 'Plugin: server_management', summary: "A managed node's agent joins with its Ed25519 public key, signed by that key",
    security: SECURITY.none, parameters: joinHeaders,
    body: { required: true, content: { 'application/json': obj({ claimed_name: { type: 'string', minLength: 1, maxLength: 100 }, agent_public_key: { type: 'string', description: 'base64 of the raw 32-byte Ed25519 public key' }, agent_version: { type: 'string', minLength: 1, maxLength: 40 } }) } },
    data: nodeAnswer,
    errors: [
      ...signedRows,
      row(403, 'AuthenticationError', 'the key was revoked: it never joins again (make a new key)'),
    ],
    description: `Signed by the key being joined (proof of possession), as the other calls are, with node id 0. A new key gets a pending node; the same key joining again (in any base64 spelling: the key is stored canonically) gets the same node. A superadmin approves it (\`npx gatehouse node approve ID\`) after comparing the fingerprint with the one the agent shows. ${SIGNING}`,
  },
  { path: '/agent/join_status', method: 'post', operationId: 'agentJoinStatus', tag: 'Plugin: server_management', summary: "The node's approval status", security: SECURITY.none, parameters: signedHeaders, body: json(obj({})), data: nodeAnswer, errors: signedRows, description: SIGNING },
  {
    path: '/agent/claim', method: 'post', operationId: 'agentClaim', tag: 'Plugin: server_management', summary: 'Take the oldest pending job for this node (or for any node), or null',
    security: SECURITY.none, parameters: signedHeaders, body: json(obj({})),
    data: obj({ job: { oneOf: [{ type: 'null' }, obj({ job_id: id, kind: str, payload: { type: 'object', additionalProperties: true } })] } }),
    errors: approvedRows, description: SIGNING,
  },
  {
    path: '/agent/result', method: 'post', operationId: 'agentResult', tag: 'Plugin: server_management', summary: 'Report the outcome of a claimed job',
    security: SECURITY.none, parameters: signedHeaders,
    body: { required: true, content: { 'application/json': obj({ job_id: id, status: { type: 'string', enum: ['completed', 'failed', 'refused'] }, output: { type: 'object', additionalProperties: true } }, ['job_id', 'status']) } },
    data: obj({ job_id: id, status: str }),
    errors: [...approvedRows, row(404, 'NotFound', 'no such job claimed by this node'), row(409, 'ActionError', "the job already has its result (data.reason 'already_reported')")],
    description: SIGNING,
  },
  { path: '/agent/leave', method: 'post', operationId: 'agentLeave', tag: 'Plugin: server_management', summary: 'The node leaves: it takes no more work until it joins and is approved again', security: SECURITY.none, parameters: signedHeaders, body: json(obj({})), data: obj({ node_id: id, status: { const: 'left' } }), errors: approvedRows, description: SIGNING },
];
