#!/usr/bin/env node
// npm test: builds (the CLI tests run the compiled CLI), then runs vitest once over every test file.
// Browser tests run when Chromium is installed and are skipped, saying so, when it is not.
//
// npm run test:quick (this script with --quick): the unit tests and the core HTTP files (envelope and
// transport, keys, CRUD, actions, idempotency, tiers, public reads), no build, no browser, no processes.
// Either way the run ends with how long it took and, last, how many tests passed.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/** The quick subset: every file here is an in-process test (no compiled CLI, no Chromium, no server process). */
const QUICK_FILES = [
  'test/unit/',
  'test/api/transport.test.ts',
  'test/api/auth-keys.test.ts',
  'test/api/crud.test.ts',
  'test/api/actions.test.ts',
  'test/api/idempotency.test.ts',
  'test/api/idempotency-example.test.ts',
  'test/api/tier-crud.test.ts',
  'test/api/tier-gating.test.ts',
  'test/api/public-content.test.ts',
];

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const run = (cmd, args, env = process.env) => spawnSync(cmd, args, { stdio: 'inherit', cwd: root, env });
const started = Date.now();

function elapsed() {
  const s = Math.round((Date.now() - started) / 1000);
  return s >= 60 ? `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, '0')}s` : `${s}s`;
}

const argv = process.argv.slice(2);
const quick = argv.includes('--quick');
const passThrough = argv.filter((a) => a !== '--quick');

if (quick) {
  console.log('npm run test:quick: unit tests and the core API files (about 2 minutes on 2 idle CPUs); `npm test` runs everything');
} else {
  console.log('npm test: every test (about 12 minutes on 2 idle CPUs); `npm run test:quick` runs a 2-minute subset');
  const build = run('npx', ['tsc', '-p', 'tsconfig.json']);
  if (build.status !== 0) process.exit(build.status ?? 1);
}

const chromium = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => existsSync(p));
const env = { ...process.env };
if (quick) {
  // No browser test is in the subset: say nothing about Chromium.
} else if (chromium) {
  env.GATEHOUSE_CHROMIUM = chromium;
  console.log(`browser tests: using ${chromium}`);
} else {
  console.log('browser tests: SKIPPED (Chromium is not installed; `apt-get install -y chromium` enables them; .ci/run installs it)');
}
console.log(`database: ${env.DATABASE_URL ? 'PostgreSQL (DATABASE_URL)' : 'embedded PGlite'}; rate-limit store: ${env.REDIS_URL ? 'Redis (REDIS_URL)' : 'in-process'}`);

mkdirSync(path.join(root, 'test-results'), { recursive: true });
const report = path.join(root, 'test-results', 'vitest.json');
const files = quick ? QUICK_FILES.filter((f) => existsSync(path.join(root, f))) : [];
const args = ['vitest', 'run', '--reporter=default', '--reporter=json', `--outputFile.json=${report}`, ...files, ...passThrough];
const result = run('npx', args, env);

if (existsSync(report)) {
  const r = JSON.parse(readFileSync(report, 'utf8'));
  const skipped = (r.numPendingTests ?? 0) + (r.numTodoTests ?? 0);
  // The count stays the last line, alone in its plain form ('tests: N passed, N failed, N skipped'): CI reads it.
  console.log(`\ntime: ${elapsed()} (${quick ? 'npm run test:quick' : 'npm test'})`);
  console.log(`tests: ${r.numPassedTests} passed, ${r.numFailedTests} failed, ${skipped} skipped`);
} else {
  console.log(`\ntests: no report (vitest exited ${result.status}) after ${elapsed()}`);
}
process.exit(result.status ?? 1);
