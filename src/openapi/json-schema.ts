import type { InputField, InputSchema } from '../actions/input.js';
import type { ColumnSpec } from '../models/define.js';

/** A JSON Schema 2020-12 object, as OpenAPI 3.1 embeds it. */
export type JsonSchema = Record<string, unknown>;

/** The contract's timestamp format: UTC, space separator, seconds precision, no zone. */
export const TIMESTAMP_PATTERN = '^\\d{4}-\\d{2}-\\d{2} \\d{2}:\\d{2}:\\d{2}$';
export const DATE_PATTERN = '^\\d{4}-\\d{2}-\\d{2}$';
/** What a datetime input accepts: seconds optional, a T or a space between date and time. */
const DATETIME_INPUT_PATTERN = '^\\d{4}-\\d{2}-\\d{2}[ T]\\d{2}:\\d{2}(:\\d{2})?$';
export const timestampSchema = (description?: string): JsonSchema => ({ type: 'string', pattern: TIMESTAMP_PATTERN, ...(description ? { description } : {}) });

const STRING_INPUT = new Set(['string', 'text', 'password', 'email']);

/** One field of an action's input schema as JSON Schema; the vocabulary's name is kept as x-input-type. */
export function inputFieldSchema(field: InputField): JsonSchema {
  const out: JsonSchema = { 'x-input-type': field.type };
  switch (field.type) {
    case 'int':
      out.type = 'integer';
      break;
    case 'float':
      out.type = 'number';
      break;
    case 'bool':
      out.type = 'boolean';
      break;
    case 'email':
      out.type = 'string';
      out.format = 'email';
      break;
    case 'password':
      out.type = 'string';
      out.format = 'password';
      break;
    case 'date':
      out.type = 'string';
      out.format = 'date';
      out.pattern = DATE_PATTERN;
      break;
    case 'datetime':
      out.type = 'string';
      out.pattern = DATETIME_INPUT_PATTERN;
      out.description = 'YYYY-MM-DD HH:MM:SS (UTC)';
      break;
    case 'array':
      out.type = 'array';
      out.items = inputFieldSchema({ type: 'string', ...field.items, ...(field.items?.options || !field.options ? {} : { options: field.options }) });
      if (field.min !== undefined) out.minItems = field.min;
      if (field.max !== undefined) out.maxItems = field.max;
      return out;
    case 'object':
      out.type = 'object';
      break;
    default:
      out.type = 'string';
  }
  if (field.options) out.enum = [...field.options];
  if (field.type === 'int' || field.type === 'float') {
    if (field.min !== undefined) out.minimum = field.min;
    if (field.max !== undefined) out.maximum = field.max;
  } else if (STRING_INPUT.has(field.type)) {
    // A required text field must not be blank ('string' and 'email' are trimmed first).
    const min = Math.max(field.min ?? 0, field.required ? 1 : 0);
    if (min > 0) out.minLength = min;
    if (field.required && (field.type === 'string' || field.type === 'email')) out.pattern = '\\S';
    const cap = Math.min(field.max_length ?? Infinity, field.max ?? Infinity);
    if (Number.isFinite(cap)) out.maxLength = cap;
  }
  return out;
}

/**
 * An action's input schema as a JSON object schema. Undeclared fields pass through to the logic, so the
 * object stays open; optional fields may be sent as null (read as not given).
 */
export function inputObjectSchema(schema: InputSchema | null): JsonSchema {
  if (!schema) return { type: 'object', additionalProperties: true };
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const [name, field] of Object.entries(schema)) {
    const s = inputFieldSchema(field);
    if (field.required) required.push(name);
    else s.type = [s.type as string, 'null'];
    properties[name] = s;
  }
  return { type: 'object', properties, ...(required.length > 0 ? { required } : {}), additionalProperties: true };
}

/** A column as CRUD exports it: every column may be null. */
export function columnReadSchema(spec: ColumnSpec): JsonSchema {
  switch (spec.type) {
    case 'serial':
    case 'int':
    case 'bigint':
    case 'smallint':
      return { type: ['integer', 'null'] };
    case 'bool':
      return { type: ['boolean', 'null'] };
    case 'timestamp':
      return { type: ['string', 'null'], pattern: TIMESTAMP_PATTERN };
    case 'date':
      return { type: ['string', 'null'], pattern: DATE_PATTERN };
    case 'numeric':
      // The drivers return decimals as text, to keep their precision.
      return { type: ['string', 'number', 'null'] };
    case 'jsonb':
      return {};
    default:
      return { type: ['string', 'null'], ...(spec.options ? { enum: [...spec.options, null] } : {}) };
  }
}

/** A column as CRUD input takes it: form fields and query parameters are text, coerced per column. */
export function columnWriteSchema(spec: ColumnSpec): JsonSchema {
  switch (spec.type) {
    case 'serial':
    case 'int':
    case 'bigint':
    case 'smallint':
      return { type: 'integer', ...(spec.min !== undefined ? { minimum: spec.min } : {}), ...(spec.maxValue !== undefined ? { maximum: spec.maxValue } : {}) };
    case 'bool':
      return { type: 'boolean' };
    case 'timestamp':
      return { type: 'string', pattern: TIMESTAMP_PATTERN };
    case 'date':
      return { type: 'string', format: 'date', pattern: DATE_PATTERN };
    case 'numeric':
      return { type: 'string', pattern: '^-?\\d{1,15}(\\.\\d{1,6})?$' };
    case 'jsonb':
      return { type: 'string', description: 'JSON text' };
    default:
      return { type: 'string', ...(spec.max !== undefined ? { maxLength: spec.max } : {}), ...(spec.options ? { enum: [...spec.options] } : {}) };
  }
}
