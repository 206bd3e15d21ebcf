import { open } from 'node:fs/promises';
import path from 'node:path';

/** Where the server writes its error-level log lines: DATA_DIR/logs/error.log. */
export function errorLogPath(dataDir: string): string {
  return path.join(dataDir, 'logs', 'error.log');
}

/** The words that make a log line an error line (case-insensitive, so pino's level labels match too). */
export const ERROR_LINE = /fatal|exception|error/i;

export interface RecentErrorLines {
  /** Matching lines, oldest first: the tail of the file, like `grep | tail -n limit`. */
  lines: string[];
  /** False when the log file does not exist (nothing has been logged yet). */
  file_present: boolean;
  /** True when reading stopped at the byte budget before finding `limit` lines or the start of the file. */
  scan_limited: boolean;
}

export interface TailOptions {
  chunkBytes?: number;
  /** Stop reading backwards after this many bytes, so a huge log costs a bounded amount. */
  maxScanBytes?: number;
  /** A longer line is cut to this many characters. */
  maxLineChars?: number;
}

const NEWLINE = 0x0a;

function decodeLine(bytes: Buffer, maxChars: number): string {
  let text = bytes.toString('utf8');
  if (text.endsWith('\r')) text = text.slice(0, -1);
  return text.length > maxChars ? text.slice(0, maxChars) : text;
}

/**
 * Reads the log backwards in chunks and returns its last `limit` lines that match ERROR_LINE. Only the
 * tail is read: the cost follows the matches wanted, not the size of the file.
 */
export async function readRecentErrorLines(file: string, limit: number, opts: TailOptions = {}): Promise<RecentErrorLines> {
  const chunkBytes = opts.chunkBytes ?? 64 * 1024;
  const maxScanBytes = opts.maxScanBytes ?? 16 * 1024 * 1024;
  const maxLineChars = opts.maxLineChars ?? 8192;

  let handle;
  try {
    handle = await open(file, 'r');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { lines: [], file_present: false, scan_limited: false };
    throw e;
  }
  try {
    const { size } = await handle.stat();
    const newestFirst: string[] = [];
    const take = (bytes: Buffer): boolean => {
      const line = decodeLine(bytes, maxLineChars);
      if (ERROR_LINE.test(line)) newestFirst.push(line);
      return newestFirst.length >= limit;
    };

    let position = size;
    // Bytes after the last newline seen so far, belonging to a line whose start is not read yet.
    let carry = Buffer.alloc(0);
    let done = limit <= 0;
    while (!done && position > 0 && size - position < maxScanBytes) {
      const length = Math.min(chunkBytes, position);
      position -= length;
      const chunk = Buffer.alloc(length);
      await handle.read(chunk, 0, length, position);
      const buf = carry.length > 0 ? Buffer.concat([chunk, carry]) : chunk;
      let end = buf.length;
      for (let i = buf.length - 1; i >= 0 && !done; i--) {
        if (buf[i] !== NEWLINE) continue;
        if (i + 1 < end) done = take(buf.subarray(i + 1, end));
        end = i;
      }
      carry = Buffer.from(buf.subarray(0, end));
    }
    if (!done && position === 0 && carry.length > 0) done = take(carry);
    return { lines: newestFirst.reverse(), file_present: true, scan_limited: !done && position > 0 };
  } finally {
    await handle.close();
  }
}
