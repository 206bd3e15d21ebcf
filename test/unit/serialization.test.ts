import { describe, expect, it } from 'vitest';
import { serializeApiPayload, success } from '../../src/http/envelope.js';
import { formatTimestamp, parseTimestamp } from '../../src/lib/time.js';
import { parseUtcTimestamp } from '../../src/db/database.js';

describe('payload conventions: timestamps', () => {
  it('formats a Date as YYYY-MM-DD HH:MM:SS in UTC with no fraction and no zone', () => {
    expect(serializeApiPayload({ t: new Date('2026-03-01T12:34:56.789Z') })).toBe('{"t":"2026-03-01 12:34:56"}');
  });

  it('writes the UTC wall time whatever offset the Date was built from', () => {
    expect(serializeApiPayload({ t: new Date('2026-03-01T23:30:00-05:00') })).toBe('{"t":"2026-03-02 04:30:00"}');
  });

  it('pads every field to two digits', () => {
    expect(serializeApiPayload({ t: new Date(Date.UTC(2026, 0, 2, 3, 4, 5)) })).toBe('{"t":"2026-01-02 03:04:05"}');
  });

  it('keeps an unset timestamp null, never an empty string', () => {
    expect(serializeApiPayload({ usr_lastlogin_time: null })).toBe('{"usr_lastlogin_time":null}');
    expect(serializeApiPayload({ t: new Date(Number.NaN) })).toBe('{"t":null}');
  });

  it('formats Dates nested in objects and arrays, and at the top level', () => {
    const d = new Date('2026-03-01T12:00:00Z');
    expect(JSON.parse(serializeApiPayload(success({ rows: [{ a: d, b: { c: [d, null] } }] })))).toEqual({
      api_version: '1.0',
      success_message: '',
      data: { rows: [{ a: '2026-03-01 12:00:00', b: { c: ['2026-03-01 12:00:00', null] } }] },
    });
    expect(serializeApiPayload(d)).toBe('"2026-03-01 12:00:00"');
    expect(serializeApiPayload([d])).toBe('["2026-03-01 12:00:00"]');
  });
});

describe('payload conventions: the payload itself is left alone', () => {
  it('never modifies the object it serialises, and shares unchanged parts', () => {
    const d = new Date('2026-03-01T12:00:00Z');
    const row = { id: 1, at: d, tags: ['a'], nested: { n: 2n } };
    const payload = success([row, row]);
    expect(serializeApiPayload(payload)).toBe(
      '{"api_version":"1.0","success_message":"","data":[{"id":1,"at":"2026-03-01 12:00:00","tags":["a"],"nested":{"n":2}},{"id":1,"at":"2026-03-01 12:00:00","tags":["a"],"nested":{"n":2}}]}',
    );
    expect(row.at).toBe(d);
    expect(row.nested.n).toBe(2n);
  });

  it('applies the conventions to what a toJSON method returns', () => {
    const value = { toJSON: () => ({ when: new Date('2026-03-01T12:00:00Z'), big: 7n }) };
    expect(serializeApiPayload({ value })).toBe('{"value":{"when":"2026-03-01 12:00:00","big":7}}');
  });

  it('drops undefined and function members the way JSON does', () => {
    expect(serializeApiPayload({ a: undefined, f: () => 1, b: [undefined, 1] })).toBe('{"b":[null,1]}');
  });
});

describe('payload conventions: booleans and counts', () => {
  it('keeps booleans and numbers as JSON types, never strings', () => {
    expect(serializeApiPayload({ active: true, deleted: false, count: 0, price: 12.5, n: -3 })).toBe(
      '{"active":true,"deleted":false,"count":0,"price":12.5,"n":-3}',
    );
  });

  it('writes bigints as JSON numbers', () => {
    expect(serializeApiPayload({ id: 42n, ids: [1n, 2n] })).toBe('{"id":42,"ids":[1,2]}');
  });

  it('leaves strings that look like dates alone', () => {
    expect(serializeApiPayload({ s: '2026-03-01T12:00:00Z', e: '' })).toBe('{"s":"2026-03-01T12:00:00Z","e":""}');
  });
});

describe('parseTimestamp', () => {
  it('reads the contract format as UTC and round-trips with formatTimestamp', () => {
    const d = parseTimestamp('2026-03-01 12:34:56');
    expect(d?.toISOString()).toBe('2026-03-01T12:34:56.000Z');
    expect(formatTimestamp(d!)).toBe('2026-03-01 12:34:56');
    expect(parseTimestamp('2024-02-29 23:59:59')?.toISOString()).toBe('2024-02-29T23:59:59.000Z');
  });

  it.each([
    ['an impossible day', '2026-02-30 00:00:00'],
    ['a non-leap 29 February', '2026-02-29 00:00:00'],
    ['month 13', '2026-13-01 00:00:00'],
    ['hour 24', '2026-03-01 24:00:00'],
    ['minute 60', '2026-03-01 12:60:00'],
    ['second 60', '2026-03-01 12:00:60'],
    ['ISO with T', '2026-03-01T12:00:00'],
    ['ISO with T and Z', '2026-03-01T12:00:00Z'],
    ['a fraction', '2026-03-01 12:00:00.5'],
    ['a Z suffix', '2026-03-01 12:00:00Z'],
    ['an offset', '2026-03-01 12:00:00+02:00'],
    ['a zone name', '2026-03-01 12:00:00 UTC'],
    ['a date alone', '2026-03-01'],
    ['no seconds', '2026-03-01 12:00'],
    ['single digits', '2026-3-1 1:2:3'],
    ['surrounding space', ' 2026-03-01 12:00:00'],
    ['a trailing newline', '2026-03-01 12:00:00\n'],
    ['an empty string', ''],
  ])('rejects %s (%j)', (_label, input) => {
    expect(parseTimestamp(input)).toBeNull();
  });
});

describe('timestamps from PostgreSQL (parseUtcTimestamp) and to the contract (formatTimestamp)', () => {
  it.each([
    ['2026-03-01 12:34:56', '2026-03-01T12:34:56.000Z'],
    ['2026-03-01 12:34:56.7', '2026-03-01T12:34:56.700Z'],
    ['2026-03-01 12:34:56.78', '2026-03-01T12:34:56.780Z'],
    ['2024-02-29 23:59:59.999999', '2024-02-29T23:59:59.999Z'],
    ['1000-01-01 00:00:00', '1000-01-01T00:00:00.000Z'],
    ['9999-12-31 23:59:59.123456', '9999-12-31T23:59:59.123Z'],
    ['0050-06-01 10:00:00', '0050-06-01T10:00:00.000Z'],
  ])('reads %s as %s (UTC)', (text, iso) => {
    expect(parseUtcTimestamp(text).toISOString()).toBe(iso);
  });

  it('reads what is not a plain timestamp as Date would (infinity is invalid, not a wrong date)', () => {
    expect(Number.isNaN(parseUtcTimestamp('infinity').getTime())).toBe(true);
    expect(Number.isNaN(parseUtcTimestamp('0044-03-15 12:00:00 BC').getTime())).toBe(true);
  });

  it('formats four-digit years from the fields and others as toISOString does', () => {
    expect(formatTimestamp(new Date('1000-01-01T00:00:00.000Z'))).toBe('1000-01-01 00:00:00');
    expect(formatTimestamp(new Date('9999-12-31T23:59:59.999Z'))).toBe('9999-12-31 23:59:59');
    expect(formatTimestamp(new Date('0050-06-01T10:00:00.000Z'))).toBe('0050-06-01 10:00:00');
    const far = new Date(Date.UTC(12026, 0, 1));
    expect(formatTimestamp(far)).toBe(far.toISOString().slice(0, 19).replace('T', ' '));
  });
});
