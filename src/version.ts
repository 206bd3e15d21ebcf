import { readFileSync } from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from './lib/paths.js';

let cached: string | undefined;

/** The service version: package.json's version, read once. */
export function serviceVersion(): string {
  if (cached === undefined) {
    const pkg = JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8')) as { version?: unknown };
    cached = typeof pkg.version === 'string' ? pkg.version : '0.0.0';
  }
  return cached;
}
