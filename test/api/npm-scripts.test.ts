import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isProcessAlive } from '../../src/db/data-dir-lock.js';
import { onPostgres } from '../helpers/database.js';
import { ROOT, freePort, pollUntil, programEnv, tempDataDir } from '../helpers/processes.js';

interface NpmRun {
  child: ChildProcess;
  output(): string;
  exited: Promise<number | null>;
}

/**
 * `npm start` / `npm run dev` as an operator runs them, without the pre-script's build (the test run has
 * built dist/ already): npm skips pre- and post-scripts under --ignore-scripts but still runs the one named.
 * Resolves once the server has printed its banner.
 */
function npmRun(script: 'start' | 'dev', env: NodeJS.ProcessEnv, ready: RegExp): Promise<NpmRun> {
  const args = script === 'start' ? ['start', '--ignore-scripts'] : ['run', 'dev', '--ignore-scripts'];
  const child = spawn('npm', args, { env: { ...env, npm_config_update_notifier: 'false', npm_config_fund: 'false' }, cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  return new Promise((resolve, reject) => {
    const timer = setInterval(() => {
      if (ready.test(out)) {
        clearInterval(timer);
        resolve({ child, output: () => out, exited });
      }
    }, 50);
    void exited.then((code) => {
      clearInterval(timer);
      reject(new Error(`npm ${script} exited with ${code} before its banner:\n${out}`));
    });
  });
}

function portAccepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.createConnection({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

// One data directory for the file: `npm start` makes it (a first start), `npm run dev` reuses it.
describe.skipIf(onPostgres)('npm start and npm run dev (real processes)', { timeout: 180_000 }, () => {
  let data: { dir: string; remove(): void };
  let port: number;
  let env: NodeJS.ProcessEnv;
  const running: NpmRun[] = [];
  const lockFile = () => path.join(data.dir, 'gatehouse.lock');

  beforeAll(async () => {
    data = tempDataDir('gh-npm-');
    port = await freePort();
    env = programEnv({ DATA_DIR: data.dir, PORT: String(port) });
  });
  afterAll(async () => {
    for (const run of running) if (run.child.exitCode === null) run.child.kill('SIGKILL');
    // A test that failed before stopping it leaves the server (npm's child) running: it would hold the port.
    if (existsSync(lockFile())) {
      const { pid } = JSON.parse(readFileSync(lockFile(), 'utf8')) as { pid: number };
      if (isProcessAlive(pid)) process.kill(pid, 'SIGKILL');
    }
    data.remove();
  });

  const session = async () => {
    const admin = JSON.parse(readFileSync(path.join(data.dir, 'initial-admin.json'), 'utf8')) as { public_key: string; secret_key: string };
    return fetch(`http://127.0.0.1:${port}/api/v1/auth/session`, { headers: { public_key: admin.public_key, secret_key: admin.secret_key } });
  };

  /** SIGTERM to npm's own process: the server under it must stop, freeing the port and the lock, within 5 s. */
  async function stopWithin5s(run: NpmRun): Promise<void> {
    const serverPid = (JSON.parse(readFileSync(lockFile(), 'utf8')) as { pid: number }).pid;
    expect(serverPid).not.toBe(run.child.pid);
    const sentAt = Date.now();
    run.child.kill('SIGTERM');
    const freed = await pollUntil(async () => (!existsSync(lockFile()) && !(await portAccepts(port)) && !isProcessAlive(serverPid) ? true : undefined), 5000);
    expect(freed, run.output()).toBe(true);
    expect(Date.now() - sentAt).toBeLessThan(5000);
    await run.exited;
    expect(run.output()).toContain('shutting down');
  }

  it('npm start: production defaults, the banner as one readable line, and SIGTERM to npm stops the server', async () => {
    const run = await npmRun('start', env, /gatehouse: ready.*\n/);
    running.push(run);
    const line = run.output().split('\n').find((l) => l.startsWith('gatehouse: ready'))!;
    expect(line).toBe(
      `gatehouse: ready, sign in at http://127.0.0.1:${port}/login; admin admin@gatehouse.local, password in ${data.dir}/initial-admin.json; ` +
        `database: the embedded database in ${data.dir} (DATA_DIR); ` +
        'the API refuses plain HTTP (for local development: npx gatehouse setting set api_require_https false, or npm run dev)',
    );
    // Production logs stay JSON; the banner is not inside them.
    expect(run.output()).toMatch(/^\{"level":30,.*"msg":"Server listening at/m);
    expect((await session()).status).toBe(426);
    await stopWithin5s(run);
  });

  it('npm run dev: api_require_https off for this data directory, pretty logs, and the banner block', async () => {
    const run = await npmRun('dev', env, /HTTPS: .*\n/);
    running.push(run);
    const out = run.output();
    expect(out).toContain('  Gatehouse is running in development mode\n');
    expect(out).toContain(`  Sign in:  http://127.0.0.1:${port}/login\n`);
    expect(out).toContain('  Email:    admin@gatehouse.local\n');
    expect(out).toContain(`  Password: in ${data.dir}/initial-admin.json\n`);
    expect(out).toContain('  HTTPS:    not required: api_require_https switched off in this data directory\n');
    // pino-pretty lines, not JSON.
    expect(out).toMatch(/^\[\d\d:\d\d:\d\d\] INFO: Server listening at http:\/\/127\.0\.0\.1:\d+/m);
    expect(out).not.toMatch(/^\{"level"/m);
    expect((await session()).status).toBe(200);
    await stopWithin5s(run);
  });
});
