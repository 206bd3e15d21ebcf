import { formatTimestamp } from '../lib/time.js';

/** The contract's input type vocabulary. */
export const INPUT_TYPES = ['string', 'int', 'float', 'bool', 'email', 'text', 'password', 'date', 'datetime', 'array', 'object'] as const;
export type InputType = (typeof INPUT_TYPES)[number];

/**
 * One field of an action's input schema, published as-is by GET /actions.
 * - options: the allowed values (for an array, of each item);
 * - min / max: numeric bounds for int and float, length bounds for the string types, item-count bounds
 *   for array;
 * - max_length: length cap for the string types;
 * - items: the schema of each element of an array.
 */
export interface InputField {
  type: InputType;
  required?: boolean;
  options?: readonly (string | number)[];
  min?: number;
  max?: number;
  max_length?: number;
  items?: InputField;
}

export type InputSchema = Record<string, InputField>;

/** The attributes the contract's action descriptor gives an input field; a schema uses no other. */
export const INPUT_FIELD_ATTRIBUTES: readonly (keyof InputField)[] = ['type', 'required', 'options', 'min', 'max', 'max_length', 'items'];

type ValueOf<F extends InputField> = F['type'] extends 'int' | 'float'
  ? number
  : F['type'] extends 'bool'
    ? boolean
    : F['type'] extends 'array'
      ? F['items'] extends InputField
        ? Array<ValueOf<F['items']>>
        : unknown[]
      : F['type'] extends 'object'
        ? Record<string, unknown>
        : F['options'] extends readonly (infer O)[]
          ? O
          : string;

/** The typed input an action's logic receives: declared fields typed and coerced, anything else unknown. */
export type InputOf<S extends InputSchema | null> = S extends InputSchema
  ? { [K in keyof S as S[K]['required'] extends true ? K : never]: ValueOf<S[K]> } & {
      [K in keyof S as S[K]['required'] extends true ? never : K]?: ValueOf<S[K]> | null;
    } & Record<string, unknown>
  : Record<string, unknown>;

const STRING_TYPES: ReadonlySet<InputType> = new Set(['string', 'text', 'password', 'email']);
const EMAIL_RE = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const INT_RE = /^[+-]?\d+$/;
const FLOAT_RE = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;
const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATETIME_RE = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2})(?::(\d{2}))?$/;

/** Why a descriptor's schema is unusable; thrown at registration so a bad schema never serves. */
export function schemaProblems(schema: InputSchema, prefix = ''): string[] {
  const problems: string[] = [];
  for (const [name, field] of Object.entries(schema)) {
    const at = `${prefix}${name}`;
    for (const attribute of Object.keys(field)) {
      if (!(INPUT_FIELD_ATTRIBUTES as readonly string[]).includes(attribute)) problems.push(`${at}: '${attribute}' is not an input attribute of the contract (${INPUT_FIELD_ATTRIBUTES.join(', ')})`);
    }
    if (!INPUT_TYPES.includes(field.type)) problems.push(`${at}: unknown type '${String(field.type)}'`);
    if (field.items && field.type !== 'array') problems.push(`${at}: items is only for arrays`);
    if (field.type === 'array' && field.items) problems.push(...schemaProblems({ '[]': field.items }, at));
    if (field.min !== undefined && field.max !== undefined && field.min > field.max) problems.push(`${at}: min is above max`);
    if (field.max_length !== undefined && !STRING_TYPES.has(field.type)) problems.push(`${at}: max_length is only for string types`);
  }
  return problems;
}

class FieldError extends Error {}
const fail = (message: string): never => {
  throw new FieldError(message);
};

function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v);
  // Query-string parsers return objects whose prototype is an empty null-prototype object.
  return proto === Object.prototype || proto === null || Object.getPrototypeOf(proto) === null;
}

function validDate(y: number, m: number, d: number): boolean {
  const dt = new Date(Date.UTC(y, m - 1, d));
  return dt.getUTCFullYear() === y && dt.getUTCMonth() === m - 1 && dt.getUTCDate() === d;
}

function toText(v: unknown): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  return fail('must be a string');
}

function coerceScalar(field: InputField, raw: unknown): unknown {
  switch (field.type) {
    case 'string':
    case 'email':
      return toText(raw).trim();
    case 'text':
    case 'password':
      return toText(raw);
    case 'int': {
      const n = typeof raw === 'number' ? raw : typeof raw === 'string' && INT_RE.test(raw.trim()) ? Number(raw.trim()) : NaN;
      if (!Number.isSafeInteger(n)) fail('must be an integer');
      return n;
    }
    case 'float': {
      const n = typeof raw === 'number' ? raw : typeof raw === 'string' && FLOAT_RE.test(raw.trim()) ? Number(raw.trim()) : NaN;
      if (!Number.isFinite(n)) fail('must be a number');
      return n;
    }
    case 'bool': {
      if (typeof raw === 'boolean') return raw;
      const s = typeof raw === 'number' || typeof raw === 'string' ? String(raw).trim().toLowerCase() : '';
      if (['true', '1', 'on', 'yes'].includes(s)) return true;
      if (['false', '0', 'off', 'no'].includes(s)) return false;
      return fail('must be true or false');
    }
    case 'date': {
      const m = typeof raw === 'string' ? DATE_RE.exec(raw.trim()) : null;
      if (!m || !validDate(Number(m[1]), Number(m[2]), Number(m[3]))) fail('must be a date YYYY-MM-DD');
      return (raw as string).trim();
    }
    case 'datetime': {
      const m = typeof raw === 'string' ? DATETIME_RE.exec(raw.trim()) : null;
      if (!m || !validDate(Number(m[1]), Number(m[2]), Number(m[3]))) return fail('must be a date and time YYYY-MM-DD HH:MM:SS');
      const [h, mi, s] = [Number(m[4]), Number(m[5]), Number(m[6] ?? 0)];
      if (h > 23 || mi > 59 || s > 59) fail('must be a date and time YYYY-MM-DD HH:MM:SS');
      return formatTimestamp(new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), h, mi, s)));
    }
    case 'object': {
      let v = raw;
      if (typeof v === 'string' && v.trim().startsWith('{')) {
        try {
          v = JSON.parse(v);
        } catch {
          fail('must be an object');
        }
      }
      if (!isPlainObject(v)) fail('must be an object');
      return v;
    }
    case 'array':
      return fail('must be a list');
  }
}

function checkBounds(field: InputField, value: unknown): void {
  if (field.options && !field.options.some((o) => o === value)) fail(`must be one of: ${field.options.join(', ')}`);
  if (typeof value === 'number') {
    if (field.min !== undefined && value < field.min) fail(`must be at least ${field.min}`);
    if (field.max !== undefined && value > field.max) fail(`must be at most ${field.max}`);
  } else if (typeof value === 'string' && STRING_TYPES.has(field.type)) {
    const length = [...value].length;
    if (field.type === 'email' && !EMAIL_RE.test(value)) fail('must be a valid email address');
    if (field.min !== undefined && length < field.min) fail(`must be at least ${field.min} characters`);
    const cap = Math.min(field.max_length ?? Infinity, field.max ?? Infinity);
    if (length > cap) fail(`must be at most ${cap} characters`);
  }
}

function coerceArray(field: InputField, raw: unknown): unknown[] {
  let list: unknown = raw;
  if (typeof list === 'string' && list.trim().startsWith('[')) {
    try {
      list = JSON.parse(list);
    } catch {
      fail('must be a list');
    }
  }
  // A form body carries a one-element list as a plain value.
  if (!Array.isArray(list)) list = [list];
  const items = list as unknown[];
  if (field.min !== undefined && items.length < field.min) fail(`must have at least ${field.min} items`);
  if (field.max !== undefined && items.length > field.max) fail(`must have at most ${field.max} items`);
  const itemField: InputField = field.items ?? { type: 'string' };
  return items.map((item, i) => {
    try {
      const v = itemField.type === 'array' ? coerceArray(itemField, item) : coerceScalar(itemField, item);
      checkBounds({ ...itemField, options: itemField.options ?? field.options }, v);
      return v;
    } catch (e) {
      if (e instanceof FieldError) return fail(`item ${i}: ${e.message}`);
      throw e;
    }
  });
}

/** Whether a raw value counts as not given: absent, null, or an empty form value. */
function isBlank(field: InputField, raw: unknown): boolean {
  if (raw === undefined || raw === null) return true;
  if (raw === '') return !STRING_TYPES.has(field.type) || field.required === true;
  return false;
}

/** Form bodies name list fields `tags[]`; the schema names them `tags`. */
export function normaliseBody(body: unknown): Record<string, unknown> {
  if (!isPlainObject(body)) return {};
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(body)) {
    const name = key.endsWith('[]') ? key.slice(0, -2) : key;
    out[name] = value;
  }
  return out;
}

export type InputResult = { ok: true; values: Record<string, unknown> } | { ok: false; errors: Record<string, string> };

/**
 * Coerces and validates raw input against a schema. Every failing field is reported; coerced values
 * overlay the raw input and undeclared fields pass through unchanged.
 */
export function coerceInput(schema: InputSchema | null, raw: Record<string, unknown>): InputResult {
  const values: Record<string, unknown> = { ...raw };
  if (!schema) return { ok: true, values };
  const errors: Record<string, string> = {};
  for (const [name, field] of Object.entries(schema)) {
    const given = raw[name];
    if (isBlank(field, given)) {
      if (field.required) errors[name] = 'is required';
      else if (given !== undefined) values[name] = null;
      continue;
    }
    try {
      const v = field.type === 'array' ? coerceArray(field, given) : coerceScalar(field, given);
      if (field.type !== 'array') checkBounds(field, v);
      if (field.required && v === '') fail('is required');
      values[name] = v;
    } catch (e) {
      if (!(e instanceof FieldError)) throw e;
      errors[name] = e.message;
    }
  }
  return Object.keys(errors).length > 0 ? { ok: false, errors } : { ok: true, values };
}
