import type { Readable } from 'node:stream';

// An mbox file, read as a stream: a message starts at a "From " line at the start of the file or after
// a blank line (mboxo/mboxrd); ">From " quoting (any number of '>') loses one '>' (mboxrd). Lines are
// handled as bytes, so 8-bit content is kept as it was.

const FROM = Buffer.from('From ');
const LF = 0x0a;

function isQuotedFrom(line: Buffer): boolean {
  let i = 0;
  while (i < line.length && line[i] === 0x3e) i++;
  return i > 0 && line.subarray(i, i + FROM.length).equals(FROM);
}

export class MboxMessageTooLarge extends Error {}

/**
 * The raw messages of an mbox stream, one at a time (only the current one is held in memory). A message
 * larger than maxBytes is skipped and reported by yielding null in its place.
 */
export async function* mboxMessages(stream: Readable, maxBytes: number): AsyncGenerator<Buffer | null> {
  let pending: Buffer = Buffer.alloc(0);
  let lines: Buffer[] = [];
  let size = 0;
  let tooLarge = false;
  let started = false;
  let previousBlank = true;

  function* finish(): Generator<Buffer | null> {
    if (!started) return;
    if (tooLarge) {
      yield null;
    } else {
      // The blank line before the next "From " belongs to the mbox, not to the message.
      let end = lines.length;
      if (end > 0 && (lines[end - 1]!.length === 1 || (lines[end - 1]!.length === 2 && lines[end - 1]![0] === 0x0d))) end--;
      yield Buffer.concat(lines.slice(0, end));
    }
    lines = [];
    size = 0;
    tooLarge = false;
  }

  function* takeLine(line: Buffer): Generator<Buffer | null> {
    const blank = line.length === 1 || (line.length === 2 && line[0] === 0x0d);
    if (previousBlank && line.subarray(0, FROM.length).equals(FROM)) {
      yield* finish();
      started = true;
      previousBlank = false;
      return;
    }
    previousBlank = blank;
    if (!started) return;
    const kept = isQuotedFrom(line) ? line.subarray(1) : line;
    size += kept.length;
    if (size > maxBytes) {
      tooLarge = true;
      lines = [];
    }
    if (!tooLarge) lines.push(kept);
  }

  for await (const chunk of stream as AsyncIterable<Buffer>) {
    pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
    let start = 0;
    for (let i = pending.indexOf(LF, start); i >= 0; i = pending.indexOf(LF, start)) {
      yield* takeLine(Buffer.from(pending.subarray(start, i + 1)));
      start = i + 1;
    }
    pending = pending.subarray(start);
  }
  if (pending.length > 0) yield* takeLine(Buffer.from(pending));
  yield* finish();
}
