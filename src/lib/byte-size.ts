/**
 * Byte sizes, in one unit system everywhere: decimal (SI) units, 1 kB = 1,000 bytes, 1 MB = 1,000,000,
 * 1 GB = 1,000,000,000, 1 TB = 10¹². Quotas are stored as whole bytes and the tier form types them in
 * these units, so "1 GB" entered on a tier is 1,000,000,000 bytes and shows as "1 GB" on the Drive page.
 * Binary units (GiB) are not accepted: one number must not have two names. static/drive.js carries a
 * copy of formatBytes for upload progress; a unit test holds the two to the same output.
 */

export type ByteUnit = 'B' | 'kB' | 'MB' | 'GB' | 'TB';

/** The units, smallest first, with their size in bytes. */
export const BYTE_UNITS: ReadonlyArray<readonly [ByteUnit, number]> = [
  ['B', 1],
  ['kB', 1e3],
  ['MB', 1e6],
  ['GB', 1e9],
  ['TB', 1e12],
];

const SIZE = new Map<string, number>([
  ['', 1],
  ['b', 1],
  ['byte', 1],
  ['bytes', 1],
  ...BYTE_UNITS.map(([name, size]) => [name.toLowerCase(), size] as const),
]);

export const isByteUnit = (unit: string): unit is ByteUnit => BYTE_UNITS.some(([name]) => name === unit);

const ONE_DECIMAL = new Intl.NumberFormat('en', { maximumFractionDigits: 1, useGrouping: false });

/**
 * Bytes for people to read: the largest unit the size reaches, at most one decimal, trailing ".0"
 * dropped. 0 → "0 B", 999 → "999 B", 1000000000 → "1 GB", 953674316 → "953.7 MB", 1610612736 → "1.6 GB".
 */
export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes)) return String(bytes);
  const sign = bytes < 0 ? '-' : '';
  const n = Math.abs(bytes);
  let i = 0;
  while (i < BYTE_UNITS.length - 1 && n >= BYTE_UNITS[i + 1]![1]) i++;
  let shown = ONE_DECIMAL.format(n / BYTE_UNITS[i]![1]);
  // 999,960 bytes rounds to "1000 kB": say "1 MB" instead.
  if (Number(shown) >= 1000 && i < BYTE_UNITS.length - 1) shown = ONE_DECIMAL.format(n / BYTE_UNITS[++i]![1]);
  return `${sign}${shown} ${BYTE_UNITS[i]![0]}`;
}

/** A size as the tier form shows it: the largest unit that states it exactly (1500000000 → 1500 MB). */
export function byteSizeParts(bytes: number): { amount: number; unit: ByteUnit } {
  if (bytes === 0) return { amount: 0, unit: 'GB' };
  if (!Number.isSafeInteger(bytes)) return { amount: bytes, unit: 'B' };
  for (let i = BYTE_UNITS.length - 1; i >= 0; i--) {
    const [unit, size] = BYTE_UNITS[i]!;
    if (bytes % size === 0) return { amount: bytes / size, unit };
  }
  return { amount: bytes, unit: 'B' };
}

export type ByteSizeParse = { value: number } | { error: string };

const SIZE_HINT = 'Enter a size such as 500 MB, 2 GB or 0.';

/**
 * A typed amount in bytes: "1.5" with unit GB (the picker beside the number), or text that names its
 * own unit ("500 MB"), which wins over the picker. Fractions are rounded half up to a whole byte in
 * integer arithmetic (no floating point drift on "1.1 GB").
 */
export function parseByteSize(text: string, unit: string = 'B'): ByteSizeParse {
  const m = /^\s*(-?)(\d*)(?:\.(\d+))?\s*([A-Za-z]*)\s*$/.exec(text.replace(/,(?=\d{3}(\D|$))/g, ''));
  if (!m || (m[2] === '' && m[3] === undefined)) return { error: SIZE_HINT };
  if (/^[kmgt]ib$/i.test(m[4]!)) return { error: 'Use kB, MB, GB or TB (1 GB = 1,000,000,000 bytes).' };
  const size = SIZE.get((m[4] !== '' ? m[4]! : unit).toLowerCase());
  if (size === undefined) return { error: SIZE_HINT };
  const fraction = m[3] ?? '';
  const scale = 10n ** BigInt(fraction.length);
  const scaled = BigInt((m[2] || '0') + fraction) * BigInt(size);
  const bytes = (scaled * 2n + scale) / (2n * scale);
  if (bytes > BigInt(Number.MAX_SAFE_INTEGER)) return { error: 'The size is too large.' };
  return { value: m[1] === '-' && bytes !== 0n ? -Number(bytes) : Number(bytes) };
}
