import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, openSync, closeSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { LineBatch } from '../../src/boot/stdout-lines.js';

const MODULE = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'dist', 'boot', 'stdout-lines.js');

/** Runs `body` in a child with `out` = stdoutLines() on its standard output; resolves its output when it exits. */
function child(body: string, onOutput?: (text: string, kill: () => void) => void): Promise<string> {
  const script = `import { stdoutLines } from ${JSON.stringify(MODULE)};\nconst out = stdoutLines();\n${body}`;
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    let text = '';
    p.stdout.setEncoding('utf8');
    p.stdout.on('data', (d: string) => {
      text += d;
      onOutput?.(text, () => p.kill('SIGKILL'));
    });
    p.once('error', reject);
    p.once('close', () => resolve(text));
  });
}

describe('console lines gathered into batches', () => {
  it('holds lines until they fill a batch, then hands them on as one chunk, in order', () => {
    const chunks: string[] = [];
    const batch = new LineBatch((c) => chunks.push(c), 10);
    batch.add('abcd\n');
    batch.add('efg\n');
    expect(chunks).toEqual([]);
    batch.add('hi\n');
    expect(chunks).toEqual(['abcd\nefg\nhi\n']);
    expect(batch.take()).toBeNull();
    batch.add('j\n');
    expect(batch.take()).toBe('j\n');
    batch.pass();
    expect(chunks).toHaveLength(1);
  });

  it('writes every line of a burst, in order and whole, when the process exits straight after', async () => {
    const text = await child(`for (let i = 0; i < 20000; i++) out.write(JSON.stringify({ n: i, pad: 'x'.repeat(i % 300) }) + '\\n');\nprocess.exit(0);`);
    const lines = text.split('\n');
    expect(lines.pop()).toBe('');
    expect(lines).toHaveLength(20000);
    expect(lines.map((l) => (JSON.parse(l) as { n: number }).n)).toEqual(Array.from({ length: 20000 }, (_, i) => i));
  });

  it("writes an idle process's single line without waiting for more", async () => {
    let seen = false;
    // The child stays alive until its line has arrived, or kills itself after 5 s (no exit flush then).
    const text = await child(`out.write('{"msg":"alone"}\\n');\nsetTimeout(() => process.kill(process.pid, 'SIGKILL'), 5000);`, (t, kill) => {
      if (!seen && t.includes('"alone"')) {
        seen = true;
        kill();
      }
    });
    expect(text).toBe('{"msg":"alone"}\n');
  }, 15_000);

  // The start banner waits on flush(): what the child counts in its own output file when called back, it is
  // killed straight after (no exit flush), so every line must have been written by flush itself.
  it.each([3, 5000])('flush calls back once all %i lines so far are on the descriptor', (lines) => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'gh-lines-'));
    const file = path.join(dir, 'out.log');
    const fd = openSync(file, 'w');
    try {
      const script =
        `import fs from 'node:fs';\nimport { stdoutLines } from ${JSON.stringify(MODULE)};\nconst out = stdoutLines();\n` +
        `for (let i = 0; i < ${lines}; i++) out.write(JSON.stringify({ n: i, pad: 'x'.repeat(i % 300) }) + '\\n');\n` +
        `out.flush(() => { fs.writeSync(2, String(fs.readFileSync(${JSON.stringify(file)}, 'utf8').split('\\n').length - 1)); process.kill(process.pid, 'SIGKILL'); });`;
      const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', fd, 'pipe'], encoding: 'utf8', timeout: 10_000 });
      expect(run.stderr).toBe(String(lines));
    } finally {
      closeSync(fd);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
