import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { deadRelativeLinks, headingAnchors, linkTargets, type Repository } from '../helpers/markdown-links.js';

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..', '..');

/** The files a fresh clone has: git's index (plus files added in this worktree but not yet staged are not). */
function clonedRepository(): Repository {
  let tracked: Set<string>;
  try {
    tracked = new Set(execFileSync('git', ['ls-files', '-z', '--cached'], { cwd: ROOT, encoding: 'utf8' }).split('\0').filter(Boolean));
  } catch {
    // Not a git checkout (an unpacked release): what is on disk is what there is.
    tracked = new Set();
    const walk = (rel: string) => {
      for (const name of readdirSync(path.join(ROOT, rel))) {
        if (name === 'node_modules' || name === '.git') continue;
        const child = rel ? `${rel}/${name}` : name;
        if (statSync(path.join(ROOT, child)).isDirectory()) walk(child);
        else tracked.add(child);
      }
    };
    walk('');
  }
  const dirs = new Set([...tracked].flatMap((f) => f.split('/').slice(0, -1).map((_, i, parts) => parts.slice(0, i + 1).join('/'))));
  return {
    root: ROOT,
    hasFile: (rel) => tracked.has(rel),
    hasDirectory: (rel) => dirs.has(rel),
    read: (rel) => readFileSync(path.join(ROOT, rel), 'utf8'),
  };
}

/** README.md, CONTRIBUTING.md, the other READMEs and every Markdown file under docs/, as repository-relative paths. */
function documentation(): string[] {
  const docs = readdirSync(path.join(ROOT, 'docs'), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f.split(path.sep).join('/')}`);
  return ['README.md', 'CONTRIBUTING.md', 'bench/README.md', 'clients/typescript/README.md', ...docs.sort()];
}

describe('links in README.md, CONTRIBUTING.md and docs/', () => {
  it('the docs the README promises are in the repository', () => {
    const promised = [
      'docs/first-hour.md',
      'docs/operator-guide.md',
      'docs/settings.md',
      'docs/plugins.md',
      'docs/billing-sources.md',
      'docs/public-content.md',
      'docs/tiers.md',
      'docs/api/README.md',
      'docs/api/authentication.md',
      'docs/api/crud.md',
      'docs/api/actions.md',
      'docs/api/drive.md',
      'docs/api/management.md',
      'docs/api/channels.md',
      'docs/api/outbound-events.md',
      'docs/api/openapi.md',
    ];
    for (const doc of promised) expect(existsSync(path.join(ROOT, doc)), doc).toBe(true);
    const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    for (const doc of promised) expect(readme, `README links ${doc}`).toContain(`](${doc}`);
  });

  it('the README is a short tour: under 8 KB', () => {
    expect(statSync(path.join(ROOT, 'README.md')).size).toBeLessThan(8192);
  });

  it('no relative link is dead in a fresh clone (files and heading anchors)', () => {
    const repo = clonedRepository();
    const files = documentation();
    const links = files.flatMap((f) => linkTargets(repo.read(f)));
    expect(links.length).toBeGreaterThan(100);
    expect(deadRelativeLinks(repo, files)).toEqual([]);
  });

  it('names no document that is not in the repository (the design notes SPEC, DESIGN, ARCHITECTURE stay outside)', () => {
    const named: string[] = [];
    for (const file of documentation()) {
      const text = readFileSync(path.join(ROOT, file), 'utf8');
      for (const m of text.matchAll(/\b(SPEC|DESIGN|ARCHITECTURE)(\.md|\s+\d+)?\b/g)) named.push(`${file}: ${m[0]}`);
    }
    expect(named).toEqual([]);
  });

  it('the checker finds what is dead: a missing file, a path out of the repository, a wrong anchor', () => {
    const texts: Record<string, string> = {
      'README.md': [
        '# Title', '## Set up', '[ok](docs/a.md#the-part) [ok](#set-up) [ok](docs/) ![img](docs/a.md)',
        '[gone](docs/missing.md) [out](../shared/SPEC.md) [anchor](docs/a.md#nope) [web](https://example.com/x)',
        '`[in code](nowhere.md)`', '```', '[in a block](nowhere.md)', '```', '[ref]: docs/also-missing.md',
      ].join('\n'),
      'docs/a.md': '# A\n## The part\n[up](../README.md#title) [self](#a)\n',
    };
    const repo: Repository = {
      root: '/',
      hasFile: (rel) => rel in texts,
      hasDirectory: (rel) => rel === 'docs',
      read: (rel) => texts[rel]!,
    };
    expect(deadRelativeLinks(repo, ['README.md', 'docs/a.md'])).toEqual([
      { file: 'README.md', target: 'docs/missing.md', problem: 'no such file in the repository' },
      { file: 'README.md', target: '../shared/SPEC.md', problem: 'points outside the repository' },
      { file: 'README.md', target: 'docs/a.md#nope', problem: 'no heading makes the anchor #nope' },
      { file: 'README.md', target: 'docs/also-missing.md', problem: 'no such file in the repository' },
    ]);
    expect([...headingAnchors('# Logs, signals and service managers\n## The `CLI` (x)\n## Dup\n## Dup')]).toEqual([
      'logs-signals-and-service-managers',
      'the-cli-x',
      'dup',
      'dup-1',
    ]);
  });
});
