import type { FastifyRequest } from 'fastify';
import { ApiError, validationError } from './errors.js';

// One input rule for every surface: no text a client sends (a path parameter, a query parameter, a body
// field or a field's name) may hold a NUL character. PostgreSQL refuses the byte in text, so such input
// would otherwise reach the database and come back as a 500; it is bad input, answered as such.

const NUL = '\u0000';
/** Deeper input is not walked: the surfaces refuse it on their own terms (the action body's depth limit). */
const MAX_DEPTH = 100;

/** A JSON object, or a query-string parser's (whose prototype is an empty null-prototype object). */
function isPlainObject(v: object): boolean {
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null || Object.getPrototypeOf(proto) === null;
}

/**
 * The name of the first field of a parsed input that holds a NUL character (in its value or its own
 * name), as `field`, `field[2]` or `field.inner`; `whole` names a bare string. Null when there is none.
 * Buffers and streams (raw bodies of the upload, webhook and agent channels) are not text and are skipped.
 */
export function nulFieldOf(value: unknown, whole = 'body', path = '', depth = 0): string | null {
  if (typeof value === 'string') return value.includes(NUL) ? path || whole : null;
  if (value === null || typeof value !== 'object' || depth > MAX_DEPTH) return null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = nulFieldOf(value[i], whole, `${path || whole}[${i}]`, depth + 1);
      if (found !== null) return found;
    }
    return null;
  }
  if (!isPlainObject(value)) return null;
  for (const [key, item] of Object.entries(value)) {
    const at = path ? `${path}.${key}` : key;
    if (key.includes(NUL)) return at.replaceAll(NUL, '\\u0000');
    const found = nulFieldOf(item, whole, at, depth + 1);
    if (found !== null) return found;
  }
  return null;
}

const MESSAGE = 'must not contain a NUL character (\\u0000)';

/**
 * The refusal of a field holding a NUL, in the vocabulary of the surface it was sent to: actions, forms
 * and the agent and relay channels validate input as 422 ValidationError naming the field; CRUD, auth,
 * management, uploads and website pages answer a validation failure as 400 TransactionError.
 */
export function nulRefusal(field: string, feature: string | undefined): ApiError {
  if (feature === 'action' || feature === 'form' || feature === 'agent' || feature === 'relay') return validationError({ [field]: MESSAGE });
  return new ApiError(400, 'TransactionError', `Input validation failed: ${field} ${MESSAGE}`);
}

/**
 * The front controller's check of a request's text (every route, API and website): path parameters, query
 * parameters and the parsed body, unless the route's surface checks its body itself at its validation
 * step (actions: after the idempotency look, and for multipart fields it reads on its own).
 */
export function nulInputRefusal(request: FastifyRequest): ApiError | null {
  const config = request.routeOptions.config;
  const field =
    nulFieldOf(request.params, 'path') ??
    nulFieldOf(request.query, 'query') ??
    (config.checksOwnBody ? null : nulFieldOf(request.body, 'body'));
  return field === null ? null : nulRefusal(field, config.feature);
}
