import { ApiError, validationError } from '../../http/errors.js';
import { nulFieldOf, nulRefusal } from '../../http/input-text.js';

/** A field an agent endpoint declares; anything else in the body is refused. */
export type FieldSpec =
  | { type: 'string'; required: boolean; minLength: number; maxLength: number }
  | { type: 'id'; required: boolean }
  | { type: 'enum'; required: boolean; values: readonly string[] }
  | { type: 'object'; required: boolean; maxBytes: number };

export type BodySpec = Record<string, FieldSpec>;

/** An empty body is an empty object; anything but a JSON object is 400 ValidationError. */
function parseObject(raw: Buffer): Record<string, unknown> {
  if (raw.length === 0) return {};
  let value: unknown;
  try {
    value = JSON.parse(raw.toString('utf8'));
  } catch {
    throw new ApiError(400, 'ValidationError', 'The body must be a JSON object', { validationErrors: { body: 'not valid JSON' } });
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ApiError(400, 'ValidationError', 'The body must be a JSON object', { validationErrors: { body: 'not a JSON object' } });
  }
  // The raw body is the signed bytes, parsed here rather than by the front controller: its one input rule
  // (no NUL in any text) applies here.
  const nul = nulFieldOf(value);
  if (nul !== null) throw nulRefusal(nul, 'agent');
  return value as Record<string, unknown>;
}

function fieldProblem(spec: FieldSpec, value: unknown): string | null {
  switch (spec.type) {
    case 'string':
      if (typeof value !== 'string') return 'must be a string';
      if (value.trim().length < spec.minLength) return `must have at least ${spec.minLength} characters`;
      if (value.length > spec.maxLength) return `must have at most ${spec.maxLength} characters`;
      return null;
    case 'id':
      return Number.isSafeInteger(value) && (value as number) >= 1 ? null : 'must be a positive integer';
    case 'enum':
      return typeof value === 'string' && spec.values.includes(value) ? null : `must be one of ${spec.values.join(', ')}`;
    case 'object':
      if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'must be a JSON object';
      return Buffer.byteLength(JSON.stringify(value)) > spec.maxBytes ? `must be at most ${spec.maxBytes} bytes of JSON` : null;
  }
}

/** The body checked against its declaration: undeclared, missing or ill-typed fields are 422 ValidationError. */
export function strictBody(raw: Buffer, spec: BodySpec): Record<string, unknown> {
  const body = parseObject(raw);
  const problems: Record<string, string> = {};
  for (const key of Object.keys(body)) if (!Object.hasOwn(spec, key)) problems[key] = 'is not a field of this endpoint';
  for (const [key, field] of Object.entries(spec)) {
    if (!Object.hasOwn(body, key) || body[key] === null) {
      if (field.required) problems[key] = 'is required';
      continue;
    }
    const problem = fieldProblem(field, body[key]);
    if (problem) problems[key] = problem;
  }
  if (Object.keys(problems).length > 0) throw validationError(problems);
  return body;
}
