import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { inject } from 'vitest';
import { randomHex } from '../../src/lib/crypto.js';

/** Black-box tests run the compiled program (`npm test` builds first; build before running vitest alone). */
export const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..', '..');
const BIN = path.join(ROOT, 'bin', 'gatehouse.js');
const MAIN = path.join(ROOT, 'dist', 'main.js');

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
  /** stdout parsed as JSON, when it is JSON. */
  json: any;
}

/** An environment for the program: only what the test gives, plus PATH and HOME. */
export function programEnv(vars: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME, LOG_LEVEL: 'info' };
  for (const [k, v] of Object.entries(vars)) if (v !== undefined) env[k] = v;
  return env;
}

export function runGatehouse(args: string[], env: NodeJS.ProcessEnv): Promise<CliResult> {
  return runNodeScript(BIN, args, env);
}

/** Runs `node script ...args` from the project root and collects its output (stdout parsed as JSON when it is). */
export function runNodeScript(script: string, args: string[], env: NodeJS.ProcessEnv): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, ...args], { env, cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      let json: any;
      try {
        json = JSON.parse(stdout);
      } catch {
        json = undefined;
      }
      resolve({ code, stdout, stderr, json });
    });
  });
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const address = srv.address();
      srv.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

export function tempDataDir(prefix: string): { dir: string; remove(): void } {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export interface ServerProcess {
  child: ChildProcess;
  port: number;
  url: string;
  output(): string;
  /** Resolves with the exit code once the process has exited. */
  exited: Promise<number | null>;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * Spawns `node dist/main.js` (or `node bin/gatehouse.js serve` with via: 'cli') and resolves once it listens,
 * or rejects with its output if it exits first.
 */
export function startServerProcess(env: NodeJS.ProcessEnv, opts: { via?: 'main' | 'cli'; timeoutMs?: number } = {}): Promise<ServerProcess> {
  // A first start initialises the embedded database (initdb in WebAssembly): ~10 s on a quiet 2-core
  // machine, several times that under load.
  const timeoutMs = opts.timeoutMs ?? 150_000;
  return new Promise((resolve, reject) => {
    const port = Number(env.PORT);
    const argv = opts.via === 'cli' ? [BIN, 'serve'] : [MAIN];
    const child = spawn(process.execPath, argv, { env, cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let ready = false;
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    const server: ServerProcess = {
      child,
      port,
      url: `http://127.0.0.1:${port}`,
      output: () => out,
      exited,
      async stop(signal = 'SIGTERM') {
        if (child.exitCode === null && child.signalCode === null) child.kill(signal);
        return exited;
      },
    };
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`server did not start in ${timeoutMs} ms:\n${out}`));
    }, timeoutMs);
    const onData = (d: Buffer) => {
      out += d.toString();
      if (!ready && out.includes('Server listening at')) {
        ready = true;
        clearTimeout(timer);
        resolve(server);
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    void exited.then((code) => {
      if (!ready) {
        clearTimeout(timer);
        reject(new Error(`server exited with ${code} before listening:\n${out}`));
      }
    });
  });
}

/** With DATABASE_URL: a fresh database cloned from the migrated template, dropped by drop(). */
export async function scratchPostgres(): Promise<{ url: string; drop(): Promise<void> }> {
  const base = process.env.DATABASE_URL;
  if (!base) throw new Error('scratchPostgres needs DATABASE_URL');
  const name = `gh_cli_${randomHex(6)}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  for (let attempt = 0; ; attempt++) {
    try {
      await admin.query(`create database ${name} template ${inject('pgTemplate')}`);
      break;
    } catch (e) {
      if (attempt > 20 || !/being accessed by other users/.test(String(e))) throw e;
      await new Promise((r) => setTimeout(r, 100 + Math.random() * 200));
    }
  }
  const u = new URL(base);
  u.pathname = `/${name}`;
  return {
    url: u.toString(),
    async drop() {
      await admin.query(`drop database if exists ${name} with (force)`);
      await admin.end();
    },
  };
}

/** Polls fn until it returns a defined value or the time runs out (then returns the last attempt's undefined). */
export async function pollUntil<T>(fn: () => Promise<T | undefined>, timeoutMs: number, everyMs = 50): Promise<T | undefined> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await fn();
    if (value !== undefined || Date.now() > deadline) return value;
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/**
 * The server's socket takes one client at a time and refuses a second (the CLI retries the same way): a
 * client arriving while the previous one's close is still on its way is refused, so connect is retried.
 */
export async function connectToServerSocket(config: pg.ClientConfig): Promise<pg.Client> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const client = new pg.Client(config);
    client.on('error', () => {});
    try {
      await client.connect();
      return client;
    } catch (e) {
      await client.end().catch(() => {});
      if (Date.now() > deadline) throw e;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}
