/** A chunk's place in the upload: `Content-Range: bytes S-E/TOTAL` (inclusive E), parsed strictly. */
export interface ChunkRange {
  start: number;
  end: number;
  total: number;
  length: number;
}

const RE = /^bytes (\d{1,16})-(\d{1,16})\/(\d{1,16})$/;

/** The range, or why the header is not one (a message for the ValidationError). */
export function parseContentRange(header: string | undefined): ChunkRange | string {
  if (header === undefined) return 'is required: bytes <start>-<end>/<total>';
  const m = RE.exec(header.trim());
  if (!m) return 'must be bytes <start>-<end>/<total>';
  const [start, end, total] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (![start, end, total].every(Number.isSafeInteger)) return 'is out of range';
  if (end < start) return 'end must not be before start';
  if (end >= total) return 'end must be below total';
  return { start, end, total, length: end - start + 1 };
}
