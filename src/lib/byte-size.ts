/**
 * Sizes typed with a unit ("500 MB", "2 GB", "1.5 GiB") and stored as a whole number of bytes. KB, MB,
 * GB and TB are decimal (1 GB = 1,000,000,000 bytes, as drives and most people count); KiB, MiB, GiB
 * and TiB are binary (1 GiB = 1024³ bytes). A bare number is bytes.
 */

const UNITS: ReadonlyArray<readonly [string, bigint]> = [
  ['TB', 10n ** 12n],
  ['TiB', 1024n ** 4n],
  ['GB', 10n ** 9n],
  ['GiB', 1024n ** 3n],
  ['MB', 10n ** 6n],
  ['MiB', 1024n ** 2n],
  ['KB', 10n ** 3n],
  ['KiB', 1024n],
];

const BY_NAME = new Map<string, bigint>([
  ['', 1n],
  ['b', 1n],
  ['byte', 1n],
  ['bytes', 1n],
  ...UNITS.map(([name, size]) => [name.toLowerCase(), size] as const),
]);

export const BYTE_SIZE_HELP = 'Type a size with its unit, for example 500 MB or 2 GB (1 GB = 1,000,000,000 bytes; GiB counts 1024³). A bare number is bytes.';

export type ByteSizeParse = { value: number } | { error: string };

/** A typed size in bytes. Fractions are allowed with a unit ("1.5 GB") and rounded to a whole byte. */
export function parseByteSize(text: string): ByteSizeParse {
  const m = /^\s*(-?)(\d+)(?:\.(\d+))?\s*([A-Za-z]*)\s*$/.exec(text.replace(/,(?=\d{3}(\D|$))/g, ''));
  const unit = m ? BY_NAME.get(m[4]!.toLowerCase()) : undefined;
  if (!m || unit === undefined) return { error: 'Enter a size such as 500 MB, 2 GB or 0.' };
  const fraction = m[3] ?? '';
  const scale = 10n ** BigInt(fraction.length);
  const scaled = BigInt(m[2]! + fraction) * unit;
  // Round half up to a whole byte, in integers (no floating point drift on "1.1 GB").
  const bytes = (scaled * 2n + scale) / (2n * scale);
  if (bytes > BigInt(Number.MAX_SAFE_INTEGER)) return { error: 'The size is too large.' };
  return { value: m[1] === '-' && bytes !== 0n ? -Number(bytes) : Number(bytes) };
}

/** Bytes in the largest unit that states them exactly: 5000000000 → "5 GB", 536870912 → "512 MiB", 1234 → "1234 bytes". */
export function formatByteSize(bytes: number): string {
  if (!Number.isSafeInteger(bytes)) return String(bytes);
  if (bytes === 0) return '0';
  const n = BigInt(Math.abs(bytes));
  const sign = bytes < 0 ? '-' : '';
  for (const [name, size] of UNITS) if (n % size === 0n) return `${sign}${n / size} ${name}`;
  return `${sign}${n} bytes`;
}
