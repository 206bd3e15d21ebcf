import type { ColumnSpec, Model } from '../../models/define.js';
import { transactionError } from '../../http/errors.js';
import { parseTimestamp } from '../../lib/time.js';
import { writableColumns } from './fields.js';

// CRUD input coercion (DESIGN 7): form fields and query strings carry strings only.
const INT_RANGE: Record<string, [number, number]> = {
  smallint: [-32768, 32767],
  int: [-2147483648, 2147483647],
  bigint: [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
  serial: [1, Number.MAX_SAFE_INTEGER],
};
const BOOLS: Record<string, boolean> = { true: true, false: false, '1': true, '0': false };
const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** One field's refusal: why its value cannot be stored. */
class Refusal {
  constructor(readonly why: string) {}
}

const bad = (_field: string, why: string) => new Refusal(why);

/** One field's raw input as a string, or a refusal (repeated keys and nested objects are not values). */
function asText(field: string, spec: ColumnSpec, raw: unknown): string {
  if (typeof raw === 'string') return raw;
  if (typeof raw === 'number' || typeof raw === 'boolean') return String(raw);
  if (raw === null) return '';
  if (spec.type === 'jsonb' && typeof raw === 'object') return JSON.stringify(raw);
  throw bad(field, 'expected a single value');
}

function convert(field: string, spec: ColumnSpec, raw: unknown): unknown {
  const text = asText(field, spec, raw);
  if (text === '') {
    if (spec.required) throw bad(field, 'a value is required');
    return null;
  }
  // PostgreSQL text cannot hold NUL; refuse it here instead of failing the write.
  if (text.includes('\u0000')) throw bad(field, 'contains a NUL character');
  switch (spec.type) {
    case 'bool': {
      const b = BOOLS[text];
      if (b === undefined) throw bad(field, 'expected true, false, 1 or 0');
      return b;
    }
    case 'smallint':
    case 'int':
    case 'bigint':
    case 'serial': {
      if (!/^-?\d{1,16}$/.test(text)) throw bad(field, 'expected an integer');
      const n = Number(text);
      const [lo, hi] = INT_RANGE[spec.type]!;
      if (!Number.isSafeInteger(n) || n < lo || n > hi) throw bad(field, 'integer out of range');
      if (spec.min !== undefined && n < spec.min) throw bad(field, `must be at least ${spec.min}`);
      if (spec.maxValue !== undefined && n > spec.maxValue) throw bad(field, `must be at most ${spec.maxValue}`);
      return n;
    }
    case 'numeric': {
      if (!/^-?\d{1,15}(\.\d{1,6})?$/.test(text)) throw bad(field, 'expected a decimal number');
      return text;
    }
    case 'timestamp': {
      const d = parseTimestamp(text);
      if (!d) throw bad(field, 'expected YYYY-MM-DD HH:MM:SS (UTC)');
      return d;
    }
    case 'date': {
      const m = DATE_RE.exec(text);
      const d = m ? new Date(`${text}T00:00:00Z`) : null;
      if (!d || Number.isNaN(d.getTime()) || d.toISOString().slice(0, 10) !== text) throw bad(field, 'expected YYYY-MM-DD');
      return text;
    }
    case 'jsonb': {
      try {
        JSON.parse(text);
      } catch {
        throw bad(field, 'expected JSON text');
      }
      // PostgreSQL's jsonb refuses the \u0000 escape.
      if (/\\u0000/i.test(text)) throw bad(field, 'contains a NUL character');
      // Sent as JSON text: the pg driver would turn a JS array into a PostgreSQL array literal.
      return text;
    }
    case 'varchar':
    case 'text': {
      if (spec.max !== undefined && [...text].length > spec.max) throw bad(field, `at most ${spec.max} characters`);
      if (spec.options && !spec.options.includes(text)) throw bad(field, `expected one of ${spec.options.join(', ')}`);
      return text;
    }
  }
}

/**
 * The model layer's check of one field: the value to store, or why it is refused (the admin screens
 * show the reason next to the field; CRUD input refuses the request with it).
 */
export function checkValue(field: string, spec: ColumnSpec, raw: unknown): { value: unknown } | { error: string } {
  try {
    return { value: convert(field, spec, raw) };
  } catch (e) {
    if (e instanceof Refusal) return { error: e.why };
    throw e;
  }
}

/** Turns one field's text into the value to store, or throws 400 TransactionError naming the field. */
export function coerceValue(field: string, spec: ColumnSpec, raw: unknown): unknown {
  const checked = checkValue(field, spec, raw);
  if ('error' in checked) throw transactionError(`Invalid value for ${field}: ${checked.error}`);
  return checked.value;
}

/**
 * Sanitized input: only writable declared columns survive (the floors and api_unwritable_fields drop the
 * rest silently); each kept value is coerced, and the first bad one refuses the whole request.
 */
export function sanitizeInput(model: Model, input: Record<string, unknown>): Record<string, unknown> {
  const writable = writableColumns(model);
  const out: Record<string, unknown> = {};
  for (const [field, raw] of Object.entries(input)) {
    if (!writable.has(field)) continue;
    out[field] = coerceValue(field, model.columns[field]!, raw);
  }
  return out;
}

/** On create, required writable columns must be present (the owner is stamped, so it is not asked for). */
export function requireCreateFields(model: Model, values: Record<string, unknown>): void {
  for (const [field, spec] of Object.entries(model.columns)) {
    if (!spec.required || field === model.owner || field === model.primaryKey) continue;
    if (!writableColumns(model).has(field)) continue;
    if (values[field] === undefined || values[field] === null) throw transactionError(`Invalid value for ${field}: a value is required`);
  }
}
