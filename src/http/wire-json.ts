import { formatTimestamp } from '../lib/time.js';

/** A Date as the contract writes it ('YYYY-MM-DD HH:MM:SS', UTC); an invalid Date is null. */
export function wireTimestamp(d: Date): string | null {
  return Number.isNaN(d.getTime()) ? null : formatTimestamp(d);
}

/**
 * A payload as JSON with the contract's value conventions: Dates as 'YYYY-MM-DD HH:MM:SS' (UTC; an invalid
 * Date null), bigints as numbers, other toJSON values their JSON form (with the same conventions); the rest
 * exactly as JSON.stringify writes it (members that are undefined or functions left out, null in their
 * place in arrays, non-finite numbers null). Undefined for a payload JSON cannot write (undefined itself).
 *
 * Written by hand rather than JSON.stringify with a replacer (which takes V8 off its fast path) or over a
 * converted copy: most of the text of a post is its body, the same string object read after read from the
 * caches, and its JSON is kept here (LongStrings) instead of being escaped again on every request.
 */
export function wireJson(value: unknown): string | undefined {
  return valueJson(value, '');
}

/** `key` is what a toJSON method is given: the member's name, or its index in an array. */
function valueJson(value: unknown, key: string | number): string | undefined {
  switch (typeof value) {
    case 'string':
      return value.length >= LONG_STRING ? longStrings.json(value) : JSON.stringify(value);
    case 'number':
      return Number.isFinite(value) ? String(value) : 'null';
    case 'boolean':
      return value ? 'true' : 'false';
    case 'bigint':
      return valueJson(Number(value), key);
    case 'object':
      return value === null ? 'null' : objectJson(value, key);
    default:
      // undefined, functions and symbols: left out of objects, null in arrays (the callers' choice).
      return undefined;
  }
}

function objectJson(value: object, key: string | number): string | undefined {
  if (value instanceof Date) return value.getTime() === value.getTime() ? `"${formatTimestamp(value)}"` : 'null';
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return valueJson((value as { toJSON: (k: string) => unknown }).toJSON(String(key)), key);
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]';
    let out = '[';
    for (let i = 0; i < value.length; i++) {
      if (i > 0) out += ',';
      out += valueJson(value[i], i) ?? 'null';
    }
    return `${out}]`;
  }
  // Boxed primitives (new String('a')) are written as their value, as JSON.stringify does.
  if (value instanceof String || value instanceof Number || value instanceof Boolean || value instanceof BigInt) return valueJson(value.valueOf(), key);
  const record = value as Record<string, unknown>;
  let out = '{';
  for (const k of Object.keys(record)) {
    const member = valueJson(record[k], k);
    if (member === undefined) continue;
    out += out.length === 1 ? quotedKey(k) : `,${quotedKey(k)}`;
    out += member;
  }
  return `${out}}`;
}

/** Keys repeat on every row: each one's quoted form (with its colon) is kept, up to MAX_KEYS. */
const keys = new Map<string, string>();
const MAX_KEYS = 4096;

function quotedKey(k: string): string {
  let quoted = keys.get(k);
  if (quoted === undefined) {
    quoted = `${JSON.stringify(k)}:`;
    if (keys.size < MAX_KEYS && k.length <= 64) keys.set(k, quoted);
  }
  return quoted;
}

/** Strings this long have their JSON kept. */
const LONG_STRING = 256;

/**
 * The JSON of long strings, the oldest out first, up to MAX_CHARS of them in all (about 16 MB
 * at two bytes a character, keys and values). A hit costs a hash V8 keeps on the string (computed once per
 * string object) and, for an equal string that is not the same object, a comparison.
 */
export class LongStrings {
  private readonly entries = new Map<string, string>();
  private chars = 0;

  constructor(private readonly maxChars: number) {}

  /** Characters kept, strings and their JSON. */
  get size(): number {
    return this.chars;
  }

  json(s: string): string {
    let json = this.entries.get(s);
    if (json !== undefined) return json;
    json = JSON.stringify(s);
    const size = s.length + json.length;
    if (size > this.maxChars / 8) return json;
    this.entries.set(s, json);
    this.chars += size;
    for (const [old, oldJson] of this.entries) {
      if (this.chars <= this.maxChars) break;
      this.entries.delete(old);
      this.chars -= old.length + oldJson.length;
    }
    return json;
  }
}

const MAX_CHARS = 8 * 1024 * 1024;
const longStrings = new LongStrings(MAX_CHARS);
