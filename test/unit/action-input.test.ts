import { describe, expect, it } from 'vitest';
import { coerceInput, normaliseBody, schemaProblems, type InputField } from '../../src/actions/input.js';

type Case = [label: string, field: InputField, raw: unknown, expected: { value: unknown } | { error: string }];

// One row per coercion or validation rule of the contract's input vocabulary.
const CASES: Case[] = [
  // string
  ['string passes through', { type: 'string' }, 'hello', { value: 'hello' }],
  ['string is trimmed', { type: 'string' }, '  hi  ', { value: 'hi' }],
  ['string from a number', { type: 'string' }, 42, { value: '42' }],
  ['string refuses an object', { type: 'string' }, { a: 1 }, { error: 'must be a string' }],
  ['string max_length', { type: 'string', max_length: 3 }, 'abcd', { error: 'must be at most 3 characters' }],
  ['string max_length counts characters, not bytes', { type: 'string', max_length: 3 }, 'äöü', { value: 'äöü' }],
  ['string min length', { type: 'string', min: 2 }, 'a', { error: 'must be at least 2 characters' }],
  ['string options', { type: 'string', options: ['a', 'b'] }, 'c', { error: 'must be one of: a, b' }],
  ['string option accepted', { type: 'string', options: ['a', 'b'] }, 'b', { value: 'b' }],
  // text and password keep their whitespace
  ['text keeps whitespace', { type: 'text' }, '  two\nlines ', { value: '  two\nlines ' }],
  ['text max_length', { type: 'text', max_length: 5 }, '123456', { error: 'must be at most 5 characters' }],
  ['password keeps whitespace', { type: 'password' }, ' secret ', { value: ' secret ' }],
  ['password min', { type: 'password', min: 8 }, 'short', { error: 'must be at least 8 characters' }],
  // email
  ['email valid', { type: 'email' }, ' ada@example.com ', { value: 'ada@example.com' }],
  ['email invalid', { type: 'email' }, 'ada@', { error: 'must be a valid email address' }],
  ['email max_length', { type: 'email', max_length: 10 }, 'ada@example.com', { error: 'must be at most 10 characters' }],
  // int
  ['int from a number', { type: 'int' }, 5, { value: 5 }],
  ['int from "5"', { type: 'int' }, '5', { value: 5 }],
  ['int from " -12 "', { type: 'int' }, ' -12 ', { value: -12 }],
  ['int refuses "5.5"', { type: 'int' }, '5.5', { error: 'must be an integer' }],
  ['int refuses 5.5', { type: 'int' }, 5.5, { error: 'must be an integer' }],
  ['int refuses "abc"', { type: 'int' }, 'abc', { error: 'must be an integer' }],
  ['int refuses true', { type: 'int' }, true, { error: 'must be an integer' }],
  ['int refuses beyond safe range', { type: 'int' }, '99999999999999999999', { error: 'must be an integer' }],
  ['int min', { type: 'int', min: 1 }, '0', { error: 'must be at least 1' }],
  ['int max', { type: 'int', max: 10 }, 11, { error: 'must be at most 10' }],
  ['int options', { type: 'int', options: [1, 2] }, '3', { error: 'must be one of: 1, 2' }],
  ['int option from text', { type: 'int', options: [1, 2] }, '2', { value: 2 }],
  // float
  ['float from "2.5"', { type: 'float' }, '2.5', { value: 2.5 }],
  ['float from "1e3"', { type: 'float' }, '1e3', { value: 1000 }],
  ['float from an int', { type: 'float' }, 3, { value: 3 }],
  ['float refuses "2,5"', { type: 'float' }, '2,5', { error: 'must be a number' }],
  ['float min', { type: 'float', min: 0.5 }, 0.25, { error: 'must be at least 0.5' }],
  ['float max', { type: 'float', max: 1.5 }, '1.75', { error: 'must be at most 1.5' }],
  // bool
  ['bool true', { type: 'bool' }, true, { value: true }],
  ['bool "true"', { type: 'bool' }, 'true', { value: true }],
  ['bool "1"', { type: 'bool' }, '1', { value: true }],
  ['bool 0', { type: 'bool' }, 0, { value: false }],
  ['bool "false"', { type: 'bool' }, 'false', { value: false }],
  ['bool "on" from an HTML checkbox', { type: 'bool' }, 'on', { value: true }],
  ['bool refuses "maybe"', { type: 'bool' }, 'maybe', { error: 'must be true or false' }],
  // date and datetime
  ['date valid', { type: 'date' }, '2024-02-29', { value: '2024-02-29' }],
  ['date impossible', { type: 'date' }, '2023-02-29', { error: 'must be a date YYYY-MM-DD' }],
  ['date wrong format', { type: 'date' }, '29/02/2024', { error: 'must be a date YYYY-MM-DD' }],
  ['datetime valid', { type: 'datetime' }, '2026-03-01 12:30:00', { value: '2026-03-01 12:30:00' }],
  ['datetime with T and no seconds is normalised', { type: 'datetime' }, '2026-03-01T12:30', { value: '2026-03-01 12:30:00' }],
  ['datetime bad hour', { type: 'datetime' }, '2026-03-01 24:00:00', { error: 'must be a date and time YYYY-MM-DD HH:MM:SS' }],
  ['datetime refuses a number', { type: 'datetime' }, 1700000000, { error: 'must be a date and time YYYY-MM-DD HH:MM:SS' }],
  // array
  ['array of ints from text items', { type: 'array', items: { type: 'int' } }, ['1', 2], { value: [1, 2] }],
  ['array from one form value', { type: 'array', items: { type: 'int' } }, '7', { value: [7] }],
  ['array from JSON text', { type: 'array', items: { type: 'string' } }, '["a","b"]', { value: ['a', 'b'] }],
  ['array item error names the item', { type: 'array', items: { type: 'int' } }, ['1', 'x'], { error: 'item 1: must be an integer' }],
  ['array item options', { type: 'array', items: { type: 'string', options: ['a'] } }, ['a', 'b'], { error: 'item 1: must be one of: a' }],
  ['array options apply to items', { type: 'array', options: ['a'] }, ['b'], { error: 'item 0: must be one of: a' }],
  ['array min items', { type: 'array', min: 2 }, ['a'], { error: 'must have at least 2 items' }],
  ['array max items', { type: 'array', max: 1 }, ['a', 'b'], { error: 'must have at most 1 items' }],
  // object
  ['object passes', { type: 'object' }, { a: 1 }, { value: { a: 1 } }],
  ['object from JSON text', { type: 'object' }, '{"a":1}', { value: { a: 1 } }],
  ['object refuses an array', { type: 'object' }, [1], { error: 'must be an object' }],
  ['object refuses text', { type: 'object' }, 'x', { error: 'must be an object' }],
  // required
  ['required and absent', { type: 'string', required: true }, undefined, { error: 'is required' }],
  ['required and null', { type: 'int', required: true }, null, { error: 'is required' }],
  ['required and empty', { type: 'string', required: true }, '', { error: 'is required' }],
  ['required and only spaces', { type: 'string', required: true }, '   ', { error: 'is required' }],
  ['optional int sent empty becomes null', { type: 'int' }, '', { value: null }],
  ['optional string sent empty stays empty', { type: 'string' }, '', { value: '' }],
];

describe('input schema: coercion and every validation rule', () => {
  it.each(CASES)('%s', (_label, field, raw, expected) => {
    const result = coerceInput({ f: field }, raw === undefined ? {} : { f: raw });
    if ('error' in expected) {
      expect(result).toEqual({ ok: false, errors: { f: expected.error } });
    } else {
      expect(result).toEqual({ ok: true, values: { f: expected.value } });
    }
  });

  it('reports every failing field at once', () => {
    const result = coerceInput(
      { a: { type: 'int', required: true }, b: { type: 'email' }, c: { type: 'bool' }, d: { type: 'string' } },
      { b: 'nope', c: 'maybe', d: 'fine' },
    );
    expect(result).toEqual({ ok: false, errors: { a: 'is required', b: 'must be a valid email address', c: 'must be true or false' } });
  });

  it('overlays coerced values on the raw input and lets undeclared fields pass through', () => {
    const result = coerceInput({ n: { type: 'int' } }, { n: '5', extra: 'kept', other: { x: 1 } });
    expect(result).toEqual({ ok: true, values: { n: 5, extra: 'kept', other: { x: 1 } } });
  });

  it('leaves absent optional fields absent', () => {
    expect(coerceInput({ n: { type: 'int' } }, {})).toEqual({ ok: true, values: {} });
  });

  it('passes everything through when the action declares no schema', () => {
    expect(coerceInput(null, { a: '1' })).toEqual({ ok: true, values: { a: '1' } });
  });

  it('reads form-body list names without their brackets', () => {
    expect(normaliseBody({ 'tags[]': ['a', 'b'], name: 'x' })).toEqual({ tags: ['a', 'b'], name: 'x' });
    expect(normaliseBody('not an object')).toEqual({});
  });

  it('finds unusable schemas before they serve', () => {
    expect(schemaProblems({ a: { type: 'integer' as never } })).toEqual([`a: unknown type 'integer'`]);
    expect(schemaProblems({ a: { type: 'int', items: { type: 'int' } } })).toEqual(['a: items is only for arrays']);
    expect(schemaProblems({ a: { type: 'int', min: 5, max: 1 } })).toEqual(['a: min is above max']);
    expect(schemaProblems({ a: { type: 'int', max_length: 3 } })).toEqual(['a: max_length is only for string types']);
    expect(schemaProblems({ a: { type: 'array', items: { type: 'nope' as never } } })).toEqual([`a[]: unknown type 'nope'`]);
  });
});
