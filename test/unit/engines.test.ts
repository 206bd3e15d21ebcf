import { readFileSync } from 'node:fs';
import path from 'node:path';
import semver from 'semver';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..', '..');
const read = (file: string) => JSON.parse(readFileSync(path.join(ROOT, file), 'utf8'));

// `npm install` warns EBADENGINE for every locked package whose engines.node excludes the Node it runs on.
describe('npm install on Node 20 prints no EBADENGINE', () => {
  const lock = read('package-lock.json') as { packages: Record<string, { version?: string; engines?: { node?: string } | string[] }> };
  const declared = (read('package.json') as { engines: { node: string } }).engines.node;
  const oldest = semver.minVersion(declared)!.version;

  const refusing = (node: string) =>
    Object.entries(lock.packages).flatMap(([where, pkg]) => {
      const range = !Array.isArray(pkg.engines) ? pkg.engines?.node : undefined;
      return where !== '' && range && !semver.satisfies(node, range) ? [`${where}@${pkg.version} wants node ${range}`] : [];
    });

  it('every locked package accepts the oldest Node the project declares', () => {
    expect(semver.major(oldest)).toBe(20);
    expect(refusing(oldest)).toEqual([]);
  });

  it('every locked package accepts the Node running the tests', () => {
    expect(refusing(process.version)).toEqual([]);
  });

  it('cookie, which @fastify/cookie asks for in a Node 22 version, is held at 1.x (same API) by an override', () => {
    expect(read('package.json').overrides.cookie).toBe('^1.1.1');
    const cookies = Object.entries(lock.packages).filter(([where]) => where.endsWith('node_modules/cookie'));
    expect(cookies.length).toBeGreaterThan(0);
    for (const [, pkg] of cookies) expect(semver.major(pkg.version!)).toBe(1);
  });
});
