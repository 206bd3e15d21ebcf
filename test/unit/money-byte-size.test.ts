import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { byteSizeParts, formatBytes, parseByteSize } from '../../src/lib/byte-size.js';
import { currencyDigits, formatMoney, minorToDecimal, parseMoney } from '../../src/lib/money.js';
import { lastDays } from '../../src/web/pages/admin/dashboard-figures.js';
import { niceMax } from '../../src/web/svg-chart.js';

describe('money', () => {
  it('knows each currency’s minor unit', () => {
    expect([currencyDigits('usd'), currencyDigits('JPY'), currencyDigits('kwd'), currencyDigits('zzz')]).toEqual([2, 0, 3, 2]);
  });

  it('parses typed prices into minor units without floating point', () => {
    expect(parseMoney('12.50', 'usd')).toEqual({ value: 1250 });
    expect(parseMoney('12.5', 'usd')).toEqual({ value: 1250 });
    expect(parseMoney('12', 'usd')).toEqual({ value: 1200 });
    expect(parseMoney('.99', 'usd')).toEqual({ value: 99 });
    expect(parseMoney('1,250.00', 'usd')).toEqual({ value: 125000 });
    expect(parseMoney('0.29', 'usd')).toEqual({ value: 29 });
    expect(parseMoney('1.10', 'jpy')).toEqual({ error: 'JPY amounts have no decimal places.' });
    expect(parseMoney('1.0', 'jpy')).toEqual({ value: 1 });
    expect(parseMoney('1.2345', 'kwd')).toEqual({ error: 'KWD amounts have at most 3 decimal places.' });
    expect(parseMoney('-1', 'usd')).toEqual({ error: 'The price cannot be negative.' });
    expect(parseMoney('1e3', 'usd')).toEqual({ error: 'Enter an amount such as 12.50.' });
    expect(parseMoney('', 'usd')).toEqual({ error: 'Enter an amount such as 12.50.' });
  });

  it('shows minor units as typed decimals and as money', () => {
    expect(minorToDecimal(1250, 'usd')).toBe('12.50');
    expect(minorToDecimal(5, 'usd')).toBe('0.05');
    expect(minorToDecimal(1200, 'jpy')).toBe('1200');
    expect(formatMoney(1250, 'usd')).toBe('$12.50');
    expect(formatMoney(null, 'usd')).toBe('—');
    expect(formatMoney(1250, 'zzz')).toBe('12.50 ZZZ');
  });
});

describe('byte sizes', () => {
  it('parses amounts in decimal units, from the picker or typed, rounding to a whole byte', () => {
    expect(parseByteSize('500 MB')).toEqual({ value: 500_000_000 });
    expect(parseByteSize('2gb')).toEqual({ value: 2_000_000_000 });
    expect(parseByteSize('1', 'GB')).toEqual({ value: 1_000_000_000 });
    expect(parseByteSize('1.5', 'GB')).toEqual({ value: 1_500_000_000 });
    expect(parseByteSize('.5', 'kB')).toEqual({ value: 500 });
    expect(parseByteSize('1.1 GB')).toEqual({ value: 1_100_000_000 });
    expect(parseByteSize('3 MB', 'GB')).toEqual({ value: 3_000_000 });
    expect(parseByteSize('1234')).toEqual({ value: 1234 });
    expect(parseByteSize('0', 'TB')).toEqual({ value: 0 });
    expect(parseByteSize('10 bytes')).toEqual({ value: 10 });
    expect(parseByteSize('-5', 'MB')).toEqual({ value: -5_000_000 });
    expect(parseByteSize('1.5 GiB')).toEqual({ error: 'Use kB, MB, GB or TB (1 GB = 1,000,000,000 bytes).' });
    expect(parseByteSize('5 XB')).toEqual({ error: 'Enter a size such as 500 MB, 2 GB or 0.' });
    expect(parseByteSize('', 'GB')).toEqual({ error: 'Enter a size such as 500 MB, 2 GB or 0.' });
    expect(parseByteSize('1e3', 'GB')).toEqual({ error: 'Enter a size such as 500 MB, 2 GB or 0.' });
    expect(parseByteSize('99999', 'TB')).toEqual({ error: 'The size is too large.' });
  });

  it('formats bytes for reading in the largest unit reached, at most one decimal', () => {
    const cases: Array<[number, string]> = [
      [0, '0 B'],
      [999, '999 B'],
      [1000, '1 kB'],
      [1234, '1.2 kB'],
      [999_960, '1 MB'],
      [1_000_000, '1 MB'],
      [953_674_316, '953.7 MB'],
      [1_000_000_000, '1 GB'],
      [1_610_612_736, '1.6 GB'],
      [5 * 1024 ** 3, '5.4 GB'],
      [10_000_000_000, '10 GB'],
      [2_500_000_000_000, '2.5 TB'],
      [5_000_000_000_000_000, '5000 TB'],
    ];
    for (const [n, text] of cases) expect(formatBytes(n)).toBe(text);
  });

  it('splits a size into the number and unit the tier form shows, exactly', () => {
    expect(byteSizeParts(1_000_000_000)).toEqual({ amount: 1, unit: 'GB' });
    expect(byteSizeParts(1_500_000_000)).toEqual({ amount: 1500, unit: 'MB' });
    expect(byteSizeParts(1234)).toEqual({ amount: 1234, unit: 'B' });
    expect(byteSizeParts(0)).toEqual({ amount: 0, unit: 'GB' });
    for (const n of [1, 999, 1000, 1024, 1_500_000, 3 * 1024 ** 3, 7_000_000_000_000]) {
      const { amount, unit } = byteSizeParts(n);
      expect(parseByteSize(String(amount), unit)).toEqual({ value: n });
    }
  });

  it('the Drive page script formats sizes as the server does', () => {
    const source = readFileSync(path.resolve('src/web/static/drive.js'), 'utf8');
    const copy = /\/\/ formatBytes:start\n([\s\S]*?)\/\/ formatBytes:end/.exec(source)?.[1];
    expect(copy).toBeDefined();
    const scriptFormat = new Function(`${copy}; return formatBytes;`)() as (n: number) => string;
    for (const n of [0, 1, 999, 1000, 1234, 999_949, 999_960, 1_000_000, 12_345_678, 953_674_316, 1_000_000_000, 1_610_612_736, 10 ** 13, 4.2e15]) {
      expect(scriptFormat(n)).toBe(formatBytes(n));
    }
  });
});

describe('dashboard chart helpers', () => {
  it('lists the last n UTC days ending today, oldest first', () => {
    expect(lastDays(new Date('2026-03-01T23:59:00Z'), 3)).toEqual(['2026-02-27', '2026-02-28', '2026-03-01']);
  });

  it('rounds the axis maximum up to 1, 2 or 5 times a power of ten', () => {
    expect([0, 1, 3, 7, 10, 11, 43, 120].map(niceMax)).toEqual([1, 1, 5, 10, 10, 20, 50, 200]);
  });
});
