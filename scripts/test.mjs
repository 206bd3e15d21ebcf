#!/usr/bin/env node
// npm test: builds (the CLI tests run the compiled CLI), then runs vitest once over every test file.
// Browser tests run when Chromium is installed and are skipped, saying so, when it is not.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const run = (cmd, args, env = process.env) => spawnSync(cmd, args, { stdio: 'inherit', cwd: root, env });

const build = run('npx', ['tsc', '-p', 'tsconfig.json']);
if (build.status !== 0) process.exit(build.status ?? 1);

const chromium = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => existsSync(p));
const env = { ...process.env };
if (chromium) {
  env.GATEHOUSE_CHROMIUM = chromium;
  console.log(`browser tests: using ${chromium}`);
} else {
  console.log('browser tests: SKIPPED (Chromium is not installed; `apt-get install -y chromium` enables them; .ci/run installs it)');
}
console.log(`database: ${env.DATABASE_URL ? 'PostgreSQL (DATABASE_URL)' : 'embedded PGlite'}; rate-limit store: ${env.REDIS_URL ? 'Redis (REDIS_URL)' : 'in-process'}`);

mkdirSync(path.join(root, 'test-results'), { recursive: true });
const report = path.join(root, 'test-results', 'vitest.json');
const args = ['vitest', 'run', '--reporter=default', '--reporter=json', `--outputFile.json=${report}`, ...process.argv.slice(2)];
const result = run('npx', args, env);

if (existsSync(report)) {
  const r = JSON.parse(readFileSync(report, 'utf8'));
  const skipped = (r.numPendingTests ?? 0) + (r.numTodoTests ?? 0);
  console.log(`\ntests: ${r.numPassedTests} passed, ${r.numFailedTests} failed, ${skipped} skipped`);
}
process.exit(result.status ?? 1);
