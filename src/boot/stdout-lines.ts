import fs from 'node:fs';
import pino from 'pino';

/**
 * Standard output for JSON lines, written off the request path: lines gather here and reach the file
 * descriptor in writes of at least BATCH_CHARS, or within FLUSH_MS of the first line gathered, whichever
 * comes first. A busy server makes one write where it made hundreds of lines (process.stdout's one
 * synchronous write per line cost a cached read a tenth of its rate, an asynchronous write per line about as
 * much, and every write wakes whatever reads the pipe on the same CPUs); an idle server's line still goes out
 * within FLUSH_MS; what is gathered when the process exits is written then.
 *
 * The gathering is here rather than in SonicBoom (pino.destination's minLength): SonicBoom measures the
 * byte length of its whole pending chunk on every write, up to 16 KB scanned per line (about 5 of the 9
 * CPU µs a line cost in all). Here a line is one push; SonicBoom sees one write per batch.
 */
export function stdoutLines(fd = 1): StdoutLines {
  const out = pino.destination({ dest: fd, sync: false });
  // Callers of flush() waiting for SonicBoom to finish what it was handed ('drain': nothing left to write).
  let writing = false;
  let waiting: Array<() => void> = [];
  const settle = (): void => {
    writing = false;
    const done = waiting;
    waiting = [];
    for (const cb of done) cb();
  };
  out.on('drain', settle);
  out.on('error', settle);
  const batch = new LineBatch((chunk) => {
    writing = true;
    out.write(chunk);
  });
  const flushSync = (): void => {
    const rest = batch.take();
    out.flushSync();
    if (rest !== null) writeAllSync(fd, rest);
  };
  // At exit the gathered lines are written to the descriptor directly, after what SonicBoom holds: handed
  // to SonicBoom they could start an asynchronous write that the exiting process never finishes.
  process.on('exit', () => {
    try {
      flushSync();
    } catch {
      // Standard output is gone (a closed pipe): there is nowhere left to write.
    }
  });
  // SonicBoom (no minLength) writes what it is handed as soon as its last write is done.
  setInterval(() => batch.pass(), FLUSH_MS).unref();
  return {
    write(line: string): boolean {
      batch.add(line);
      return true;
    },
    flushSync,
    flush(cb: () => void): void {
      batch.pass();
      if (writing) waiting.push(cb);
      else cb();
    },
  };
}

export interface StdoutLines extends pino.DestinationStream {
  /** Writes what is gathered now, synchronously (at exit). */
  flushSync(): void;
  /** Hands on what is gathered and calls back once it has reached the descriptor, in order after every earlier line. */
  flush(cb: () => void): void;
}

/** Lines gathered until they fill a batch, then handed on as one string. */
export class LineBatch {
  private lines: string[] = [];
  private chars = 0;

  constructor(
    private readonly write: (chunk: string) => void,
    private readonly batchChars = BATCH_CHARS,
  ) {}

  add(line: string): void {
    this.lines.push(line);
    this.chars += line.length;
    if (this.chars >= this.batchChars) this.pass();
  }

  /** Hands on whatever is gathered (nothing when empty). */
  pass(): void {
    const chunk = this.take();
    if (chunk !== null) this.write(chunk);
  }

  /** What is gathered, as one string, and forgets it; null when nothing is. */
  take(): string | null {
    if (this.lines.length === 0) return null;
    const chunk = this.lines.length === 1 ? this.lines[0]! : this.lines.join('');
    this.lines = [];
    this.chars = 0;
    return chunk;
  }
}

/** Writes all of `text` now, waiting out a full pipe (EAGAIN); a closed one (EPIPE) takes nothing more. */
function writeAllSync(fd: number, text: string): void {
  let rest = Buffer.from(text);
  while (rest.length > 0) {
    try {
      rest = rest.subarray(fs.writeSync(fd, rest));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EAGAIN') return;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10);
    }
  }
}

/** 32 KB: at 4 KB a cached read at info kept 0.86 of its rate at warn, at 32 KB 0.94 (PGlite, bench). */
const BATCH_CHARS = 32 * 1024;
const FLUSH_MS = 50;
