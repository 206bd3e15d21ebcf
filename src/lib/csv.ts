import type { Readable } from 'node:stream';

/**
 * A streaming RFC 4180 reader: records come out as the text arrives, so a file is never held whole.
 * Fields are separated by commas, records by CRLF (LF and a lone CR are accepted too); a field in
 * double quotes may hold commas, line breaks and doubled quotes. A leading UTF-8 byte order mark is
 * dropped and blank lines are skipped. Anything else a CSV cannot be is a CsvError naming the line:
 * bytes that are not UTF-8, a NUL byte (binary content), a quote inside an unquoted field, text after a
 * closing quote, a quote left open at the end, or a record longer than `maxRecordChars`.
 */
export class CsvError extends Error {
  constructor(
    readonly line: number,
    readonly reason: string,
  ) {
    super(`line ${line}: ${reason}`);
  }
}

export interface CsvRecord {
  /** The line the record starts on (1-based). */
  line: number;
  fields: string[];
}

/** The longest record accepted by default: an unclosed quote otherwise swallows the rest of the file. */
export const MAX_RECORD_CHARS = 1 << 20;

type State = 'field_start' | 'unquoted' | 'quoted' | 'quote_in_quoted';

/** The parser itself: feed it text in any pieces, then end(). Synchronous and small, for unit tests. */
export class CsvParser {
  private state: State = 'field_start';
  private field = '';
  private fields: string[] = [];
  private line = 1;
  private recordLine = 1;
  private recordChars = 0;
  private lastWasCr = false;
  private started = false;

  constructor(private readonly maxRecordChars = MAX_RECORD_CHARS) {}

  /** The line being read (1-based). */
  get lineNumber(): number {
    return this.line;
  }

  /** Parses the next piece of text; returns the records it completed. */
  push(text: string): CsvRecord[] {
    const out: CsvRecord[] = [];
    let i = 0;
    if (!this.started && text.length > 0) {
      this.started = true;
      if (text.charCodeAt(0) === 0xfeff) i = 1;
    }
    for (; i < text.length; i++) {
      const c = text[i]!;
      if (c === '\0') throw new CsvError(this.line, 'a NUL byte: this is not a text file');
      // A CRLF pair is one line break: the LF after a CR that already ended the record is skipped.
      if (this.lastWasCr) {
        this.lastWasCr = false;
        if (c === '\n' && this.state !== 'quoted') continue;
      }
      if (++this.recordChars > this.maxRecordChars) throw new CsvError(this.recordLine, `a record longer than ${this.maxRecordChars} characters (a quote left open?)`);
      switch (this.state) {
        case 'field_start':
          if (c === '"') this.state = 'quoted';
          else if (c === ',') this.fields.push('');
          else if (c === '\n' || c === '\r') this.endRecord(out, c);
          else {
            this.field = c;
            this.state = 'unquoted';
          }
          break;
        case 'unquoted':
          if (c === ',') this.endField();
          else if (c === '\n' || c === '\r') this.endRecord(out, c);
          else if (c === '"') throw new CsvError(this.line, 'a quote inside a field that does not start with one');
          else this.field += c;
          break;
        case 'quoted':
          if (c === '"') this.state = 'quote_in_quoted';
          else {
            if (c === '\n') this.line++;
            else if (c === '\r' && text[i + 1] !== '\n') this.line++;
            this.field += c;
          }
          break;
        case 'quote_in_quoted':
          if (c === '"') {
            this.field += '"';
            this.state = 'quoted';
          } else if (c === ',') this.endField();
          else if (c === '\n' || c === '\r') this.endRecord(out, c);
          else throw new CsvError(this.line, 'text after a closing quote');
          break;
      }
    }
    return out;
  }

  /** The end of the text: the last record (without a final line break), or an error for an open quote. */
  end(): CsvRecord[] {
    if (this.state === 'quoted') throw new CsvError(this.recordLine, 'a quote opened and never closed');
    const out: CsvRecord[] = [];
    if (this.state !== 'field_start' || this.fields.length > 0) this.endRecord(out, '');
    return out;
  }

  private endField(): void {
    this.fields.push(this.field);
    this.field = '';
    this.state = 'field_start';
  }

  private endRecord(out: CsvRecord[], brk: string): void {
    this.fields.push(this.field);
    const blank = this.fields.length === 1 && this.fields[0] === '';
    if (!blank) out.push({ line: this.recordLine, fields: this.fields });
    this.fields = [];
    this.field = '';
    this.state = 'field_start';
    this.recordChars = 0;
    if (brk !== '') this.line++;
    this.lastWasCr = brk === '\r';
    this.recordLine = this.line;
  }
}

/** Where a stream of records is: the bytes read so far (for a progress bar). */
export interface CsvProgress {
  bytesRead: number;
}

/**
 * The records of a byte stream, as they arrive. UTF-8 is decoded strictly (a file in another encoding,
 * or binary, is a CsvError rather than mojibake). `progress.bytesRead` counts the bytes consumed.
 */
export async function* csvRecords(stream: Readable | AsyncIterable<Buffer | string>, progress: CsvProgress = { bytesRead: 0 }, maxRecordChars = MAX_RECORD_CHARS): AsyncGenerator<CsvRecord> {
  const parser = new CsvParser(maxRecordChars);
  const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  const decode = (bytes: Uint8Array | undefined, line: number): string => {
    try {
      return bytes === undefined ? decoder.decode() : decoder.decode(bytes, { stream: true });
    } catch {
      throw new CsvError(line, 'bytes that are not UTF-8 text');
    }
  };
  for await (const chunk of stream) {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    const records = parser.push(decode(bytes, parser.lineNumber));
    progress.bytesRead += bytes.length;
    yield* records;
  }
  yield* parser.push(decode(undefined, parser.lineNumber));
  yield* parser.end();
}

/** One field written the RFC 4180 way: quoted when it holds a comma, a quote or a line break. */
export function csvField(value: string): string {
  return /[",\r\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

/** One record, ending in CRLF. */
export function csvLine(values: readonly string[]): string {
  return `${values.map(csvField).join(',')}\r\n`;
}
