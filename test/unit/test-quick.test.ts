import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..', '..');

/** QUICK_FILES of scripts/test.mjs (the script runs when imported, so it is read as text). */
function quickFiles(): string[] {
  const text = readFileSync(path.join(ROOT, 'scripts', 'test.mjs'), 'utf8');
  const list = /const QUICK_FILES = \[([\s\S]*?)\];/.exec(text);
  if (!list) throw new Error('scripts/test.mjs has no QUICK_FILES list');
  return [...list[1]!.matchAll(/'([^']+)'/g)].map((m) => m[1]!);
}

function testFiles(entry: string): string[] {
  const full = path.join(ROOT, entry);
  if (!statSync(full).isDirectory()) return [entry];
  return readdirSync(full, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.test.ts'))
    .map((f) => path.posix.join(entry, f.split(path.sep).join('/')));
}

// npm run test:quick must stay quick: in-process tests only, every listed file present.
describe('npm run test:quick', () => {
  it('is a package script running scripts/test.mjs --quick', () => {
    const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    expect(pkg.scripts['test:quick']).toBe('node scripts/test.mjs --quick');
  });

  it('lists files that exist, with no browser, cluster or process test among them', () => {
    const entries = quickFiles();
    expect(entries).toContain('test/unit/');
    for (const entry of entries) expect(existsSync(path.join(ROOT, entry)), entry).toBe(true);
    const files = entries.flatMap(testFiles);
    expect(files.length).toBeGreaterThan(40);
    for (const file of files.filter((f) => f !== 'test/unit/test-quick.test.ts')) {
      expect(file, file).not.toMatch(/^test\/(browser|cluster)\//);
      const source = readFileSync(path.join(ROOT, file), 'utf8');
      // The compiled CLI, a server process or Chromium would need a build or a browser.
      expect(source, file).not.toMatch(/helpers\/(browser|webauthn-browser)\.js|playwright|runGatehouse|runNodeScript|startServer|dist\/main\.js/);
    }
  });
});
