import type { ByteRange } from './blobs/store.js';

// What serving a stored file needs besides the bytes: the Range header (RFC 9110 14.2) and a
// Content-Disposition whose filename cannot break out of the header (RFC 6266, RFC 8187).

/**
 * The one byte range a `Range` header asks for within `size` bytes: null to send the whole file (no
 * header, a unit other than bytes, or several ranges, which a server may ignore), 'unsatisfiable' for
 * the 416 answer.
 */
export function parseRange(header: string | undefined, size: number): ByteRange | null | 'unsatisfiable' {
  if (header === undefined) return null;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m) return null;
  const [first, last] = [m[1]!, m[2]!];
  if (first === '' && last === '') return null;
  if (first === '') {
    const suffix = Number(last);
    if (!Number.isSafeInteger(suffix) || suffix === 0 || size === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(first);
  if (!Number.isSafeInteger(start) || start >= size) return 'unsatisfiable';
  const end = last === '' ? size - 1 : Math.min(Number(last), size - 1);
  if (!Number.isSafeInteger(end) || end < start) return 'unsatisfiable';
  return { start, end };
}

/** `attachment` with an ASCII fallback filename and the exact name as filename* (UTF-8, percent-encoded). */
export function contentDisposition(name: string): string {
  // eslint-disable-next-line no-control-regex
  const clean = name.replace(/[\u0000-\u001f\u007f]/g, '').trim() || 'download';
  const fallback = clean.replace(/[^\x20-\x7e]|["\\%;]/g, '_');
  const encoded = encodeURIComponent(clean).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `attachment; filename="${fallback}"; filename*=UTF-8''${encoded}`;
}

const MIME_RE = /^[a-z0-9][a-z0-9!#$&^_.+-]{0,126}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}$/;

/** The stored media type when it is a plain type/subtype, else application/octet-stream. */
export function servedContentType(mime: string | null): string {
  return mime !== null && MIME_RE.test(mime) ? mime : 'application/octet-stream';
}
