import { describe, expect, it } from 'vitest';
import { formatTimestamp } from '../../src/lib/time.js';
import { LongStrings, wireJson } from '../../src/http/wire-json.js';

/**
 * The rule wireJson implements, written the plain way: the contract's conversions over a copy, then
 * JSON.stringify. The hand-written serialiser must write the same text for every payload.
 */
function reference(value: unknown): string | undefined {
  const convert = (v: unknown, key: string): unknown => {
    if (typeof v === 'bigint') return Number(v);
    if (v === null || typeof v !== 'object') return v;
    if (v instanceof Date) return Number.isNaN(v.getTime()) ? null : formatTimestamp(v);
    if (typeof (v as { toJSON?: unknown }).toJSON === 'function') return convert((v as { toJSON: (k: string) => unknown }).toJSON(key), key);
    if (Array.isArray(v)) return Array.from(v, (item, i) => convert(item, String(i)));
    if (v instanceof String || v instanceof Number || v instanceof Boolean) return v;
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(v)) out[k] = convert((v as Record<string, unknown>)[k], k);
    return out;
  };
  return JSON.stringify(convert(value, ''));
}

/** A small seeded generator (mulberry32): the same payloads on every run. */
function random(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const TRICKY = ['', 'a', '"', '\\', '\n\t\r\b\f', '\u0000\u001f\u007f', 'é ü 中文 😀', '\ud800', 'a\udc00b', '</script>', '\u2028\u2029', 'x'.repeat(300), `"${'\\'.repeat(280)}"`];
const NUMBERS = [0, -0, 1, -1, 0.1, 1e21, 1e-7, 123456789.125, Number.MAX_SAFE_INTEGER, NaN, Infinity, -Infinity];
const DATES = [new Date('2026-03-01T12:34:56.789Z'), new Date(Number.NaN), new Date('0099-01-01T00:00:00Z'), new Date('+010000-01-01T00:00:00Z')];

function payload(next: () => number, depth: number): unknown {
  const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)]!;
  const kind = Math.floor(next() * (depth > 3 ? 8 : 12));
  switch (kind) {
    case 0: return pick(TRICKY);
    case 1: return pick(NUMBERS);
    case 2: return pick([true, false, null, undefined]);
    case 3: return pick([0n, 42n, -7n, 2n ** 70n]);
    case 4: return pick(DATES);
    case 5: return pick([() => 1, Symbol('s')]);
    // A long string built afresh: equal in content to an earlier one, a different object.
    case 6: return `${'long body '.repeat(30)}${pick(['a', 'b', '\n'])}`;
    case 7: return pick(TRICKY) + String(Math.floor(next() * 10));
    case 8: {
      const out: Record<string, unknown> = {};
      const n = Math.floor(next() * 6);
      for (let i = 0; i < n; i++) out[pick(['id', 'pst_title', 'k"ey', 'é', '1', '0', `k${i}`, '__proto__x'])] = payload(next, depth + 1);
      return out;
    }
    case 9: {
      const out: unknown[] = [];
      const n = Math.floor(next() * 5);
      for (let i = 0; i < n; i++) out.push(payload(next, depth + 1));
      if (next() < 0.2) out.length += 2; // holes
      return out;
    }
    case 10: {
      const inner = payload(next, depth + 1);
      return pick([{ toJSON: () => inner }, { toJSON: (key: string) => ({ key, inner }) }, Buffer.from('hi'), new String('boxed'), new Number(3), new Boolean(false)]);
    }
    default: {
      // Inherited members are not written; own members are, in their order.
      const proto = { inherited: 1 };
      const own = Object.create(proto) as Record<string, unknown>;
      own.z = payload(next, depth + 1);
      own.a = payload(next, depth + 1);
      return pick([own, Object.assign(Object.create(null) as object, { n: 1, d: DATES[0] })]);
    }
  }
}

describe('wireJson: the API payload as JSON', () => {
  it('writes exactly what JSON.stringify writes after the contract conversions, for 5,000 generated payloads', () => {
    const next = random(20261128);
    for (let i = 0; i < 5000; i++) {
      const value = payload(next, 0);
      expect(wireJson(value), `payload ${i}`).toBe(reference(value));
    }
  });

  it('writes the same text again when a long string is read a second time (the kept JSON)', () => {
    const body = `<p>${'a "quoted" body\n'.repeat(40)}</p>`;
    const first = wireJson({ pst_body: body, id: 1 });
    expect(wireJson({ pst_body: body, id: 1 })).toBe(first);
    expect(wireJson({ pst_body: `${body}`.slice(0), id: 1 })).toBe(first);
    expect(JSON.parse(first!)).toEqual({ pst_body: body, id: 1 });
  });

  it('gives toJSON the member name or the array index, and writes what it returns with the conventions', () => {
    const seen: string[] = [];
    const probe = { toJSON: (key: string) => (seen.push(key), { at: DATES[0], n: 5n }) };
    expect(wireJson({ m: probe, list: [probe, probe] })).toBe('{"m":{"at":"2026-03-01 12:34:56","n":5},"list":[{"at":"2026-03-01 12:34:56","n":5},{"at":"2026-03-01 12:34:56","n":5}]}');
    expect(seen).toEqual(['m', '0', '1']);
  });

  it('gives undefined for a payload JSON cannot write, as JSON.stringify does', () => {
    expect(wireJson(undefined)).toBeUndefined();
    expect(wireJson(() => 1)).toBeUndefined();
    expect(wireJson({ toJSON: () => undefined })).toBeUndefined();
  });
});

describe('LongStrings: the kept JSON of long strings', () => {
  it('keeps at most its budget, the oldest out first, and answers correctly after an eviction', () => {
    const kept = new LongStrings(10_000);
    const texts = Array.from({ length: 40 }, (_, i) => `${i}:${'t\n'.repeat(200)}`);
    for (const t of texts) expect(kept.json(t)).toBe(JSON.stringify(t));
    expect(kept.size).toBeLessThanOrEqual(10_000);
    expect(kept.size).toBeGreaterThan(8_000);
    for (const t of texts) expect(kept.json(t)).toBe(JSON.stringify(t));
  });

  it('does not keep a string bigger than an eighth of its budget', () => {
    const kept = new LongStrings(8_000);
    expect(kept.json('x'.repeat(600))).toBe(JSON.stringify('x'.repeat(600)));
    expect(kept.size).toBe(0);
  });
});
