import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { CsvError, CsvParser, csvLine, csvRecords, type CsvRecord } from '../../src/lib/csv.js';

function parse(text: string, max?: number): CsvRecord[] {
  const p = new CsvParser(max);
  return [...p.push(text), ...p.end()];
}
const fields = (text: string) => parse(text).map((r) => r.fields);

async function streamed(chunks: Array<Buffer | string>): Promise<CsvRecord[]> {
  const out: CsvRecord[] = [];
  for await (const r of csvRecords(Readable.from(chunks.map((c) => (typeof c === 'string' ? Buffer.from(c) : c))))) out.push(r);
  return out;
}

describe('CSV reading (RFC 4180)', () => {
  it('splits fields on commas and records on CRLF, LF or CR, with or without a final line break', () => {
    expect(fields('a,b,c\r\n1,2,3\r\n')).toEqual([['a', 'b', 'c'], ['1', '2', '3']]);
    expect(fields('a,b\n1,2')).toEqual([['a', 'b'], ['1', '2']]);
    expect(fields('a,b\r1,2\r')).toEqual([['a', 'b'], ['1', '2']]);
  });

  it('keeps empty fields and skips blank lines', () => {
    expect(fields('a,,c\n\n,,\n\r\nx')).toEqual([['a', '', 'c'], ['', '', ''], ['x']]);
  });

  it('reads quoted fields with commas, doubled quotes and line breaks, and numbers records by their first line', () => {
    const records = parse('name,note\r\n"Lovelace, Ada","said ""hi""\r\nand left"\r\nnext,x\r\n');
    expect(records).toEqual([
      { line: 1, fields: ['name', 'note'] },
      { line: 2, fields: ['Lovelace, Ada', 'said "hi"\r\nand left'] },
      { line: 4, fields: ['next', 'x'] },
    ]);
  });

  it('drops a leading byte order mark', () => {
    expect(fields('\ufeffemail\nx@y.z')).toEqual([['email'], ['x@y.z']]);
  });

  it('refuses what a CSV cannot be, naming the line', () => {
    expect(() => parse('a,b\nx"y,z')).toThrow(new CsvError(2, 'a quote inside a field that does not start with one'));
    expect(() => parse('a\n"x"y')).toThrow(CsvError);
    expect(() => parse('a\n"open\nstill')).toThrow(new CsvError(2, 'a quote opened and never closed'));
    expect(() => parse('a\u0000b')).toThrow(/NUL byte/);
    expect(() => parse('"' + 'x'.repeat(50), 20)).toThrow(/longer than 20 characters/);
  });

  it('streams: records split across chunks (and a UTF-8 character split across them) read the same', async () => {
    const text = 'email,name\r\n"a@b.co","Zoë, ""Z"""\r\nc@d.co,Ünal\r\n';
    const bytes = Buffer.from(text);
    const whole = await streamed([bytes]);
    for (let cut = 1; cut < bytes.length; cut += 3) {
      expect(await streamed([bytes.subarray(0, cut), bytes.subarray(cut)])).toEqual(whole);
    }
    expect(whole.map((r) => r.fields)).toEqual([['email', 'name'], ['a@b.co', 'Zoë, "Z"'], ['c@d.co', 'Ünal']]);
  });

  it('refuses bytes that are not UTF-8 (a spreadsheet or an image)', async () => {
    await expect(streamed([Buffer.from([0x50, 0x4b, 0x03, 0x04, 0xff, 0xfe, 0x00])])).rejects.toThrow(CsvError);
    await expect(streamed([Buffer.from('email\n'), Buffer.from([0xc3, 0x28])])).rejects.toThrow(/not UTF-8/);
  });

  it('writes fields the way it reads them', () => {
    const values = ['plain', 'with, comma', 'with "quote"', 'two\nlines', ''];
    expect(csvLine(values)).toBe('plain,"with, comma","with ""quote""","two\nlines",\r\n');
    expect(fields(csvLine(values))).toEqual([values]);
  });
});
