import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readRecentErrorLines } from '../../src/logs/error-log.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'gh-errlog-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const file = (content: string | Buffer) => {
  const f = path.join(dir, `e${++n}.log`);
  writeFileSync(f, content);
  return f;
};

describe('errors/recent: reading the tail of the error log', () => {
  it('matches Fatal, Exception and Error in any letter case, and nothing else', async () => {
    const f = file(['PHP Fatal error', 'warning: disk', 'TypeError: x', 'RuntimeException', '{"level":"error"}', 'FATAL', 'notice'].join('\n'));
    expect((await readRecentErrorLines(f, 20)).lines).toEqual(['PHP Fatal error', 'TypeError: x', 'RuntimeException', '{"level":"error"}', 'FATAL']);
  });

  it('gives the same answer whatever the chunk size: lines across chunk boundaries, CRLF, multibyte text, no final newline', async () => {
    const lines = Array.from({ length: 200 }, (_, i) => (i % 4 === 0 ? `info ${i} ✓ ok` : `Error ${i} — näïve ${'x'.repeat(i % 37)}`));
    const content = lines.join('\r\n');
    const f = file(content);
    const expected = lines.filter((l) => l.startsWith('Error')).slice(-40);
    for (const chunkBytes of [1, 2, 3, 7, 64, 1000, 1 << 20]) {
      const got = await readRecentErrorLines(f, 40, { chunkBytes });
      expect(got.lines, String(chunkBytes)).toEqual(expected);
      expect(got.scan_limited).toBe(false);
    }
  });

  it('returns fewer lines when the file has fewer, and the first line of the file counts', async () => {
    const f = file('Error first\ninfo\nError last\n');
    expect((await readRecentErrorLines(f, 20, { chunkBytes: 4 })).lines).toEqual(['Error first', 'Error last']);
  });

  it('reads only the tail of a large file, and stops at its byte budget', async () => {
    const noise = Buffer.alloc(10 * 800_000, 'info line\n');
    const f = file(Buffer.concat([Buffer.from('Error at the very start\n'), noise, Buffer.from('Error near the end\n')]));
    const near = await readRecentErrorLines(f, 1, { maxScanBytes: 1024 * 1024 });
    expect(near).toEqual({ lines: ['Error near the end'], file_present: true, scan_limited: false });
    const budget = await readRecentErrorLines(f, 2, { maxScanBytes: 1024 * 1024 });
    expect(budget).toEqual({ lines: ['Error near the end'], file_present: true, scan_limited: true });
    const whole = await readRecentErrorLines(f, 2, { maxScanBytes: 64 * 1024 * 1024 });
    expect(whole.lines).toEqual(['Error at the very start', 'Error near the end']);
  });

  it('cuts a very long line', async () => {
    const f = file(`Error ${'y'.repeat(20_000)}\n`);
    const got = await readRecentErrorLines(f, 1, { maxLineChars: 100 });
    expect(got.lines[0]).toHaveLength(100);
  });

  it('reports a missing file as absent, not as an error', async () => {
    expect(await readRecentErrorLines(path.join(dir, 'none.log'), 20)).toEqual({ lines: [], file_present: false, scan_limited: false });
  });
});
