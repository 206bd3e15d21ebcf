import path from 'node:path';
import pino from 'pino';
import { errorLogPath } from './logs/error-log.js';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { bootstrapInitialAdmin } from './accounts/initial-admin.js';
import type { Config } from './config.js';
import { acquireDataDirLock } from './db/data-dir-lock.js';
import { openDatabase, type Database } from './db/database.js';
import { migrateToLatest } from './db/migrate.js';
import { startSocketServer, type SocketServer } from './db/socket-server.js';
import { buildApp } from './http/app.js';
import { createServices, type Services } from './services.js';

export interface RunningServer {
  app: FastifyInstance;
  services: Services;
  /** Stops accepting, finishes in-flight requests, flushes logs, closes the database, releases the lock; false if a step failed. */
  close(): Promise<boolean>;
}

/**
 * The server's logger: every line to stdout, and error-level lines also to DATA_DIR/logs/error.log, which
 * management/errors/recent reads.
 */
export function serverLogger(level: string, dataDir: string): pino.Logger {
  const errorFile = pino.destination({ dest: errorLogPath(dataDir), mkdir: true, sync: false });
  return pino(loggerOptions(level), pino.multistream([{ level: level as pino.Level, stream: process.stdout }, { level: 'error', stream: errorFile }]));
}

/** Request and response as logged: method, path without its query string, client address, status. Never headers. */
export function loggerOptions(level: string): pino.LoggerOptions {
  return {
    level,
    serializers: {
      req: (request: FastifyRequest) => ({
        method: request.method,
        url: request.url.split('?')[0],
        remoteAddress: request.ip,
      }),
      res: (reply: FastifyReply) => ({ statusCode: reply.statusCode }),
    },
  };
}

/** Undoes what has been set up so far, newest first, even when a step fails. */
class Teardown {
  private steps: Array<() => Promise<void> | void> = [];
  add(step: () => Promise<void> | void): void {
    this.steps.unshift(step);
  }
  /** Resolves false when any step failed (each failure is reported, and the rest still run). */
  async run(onError: (e: unknown) => void): Promise<boolean> {
    const steps = this.steps;
    this.steps = [];
    let ok = true;
    for (const step of steps) {
      try {
        await step();
      } catch (e) {
        ok = false;
        onError(e);
      }
    }
    return ok;
  }
}

export async function startServer(config: Config): Promise<RunningServer> {
  // Set up in the order the shutdown undoes backwards: socket clients first (an open transaction of theirs
  // holds up every server query, so in-flight requests and the log flush could not finish), then the app
  // (stops accepting, finishes in-flight requests), services (scheduler, request log flush), database, lock.
  const teardown = new Teardown();
  try {
    const embedded = !config.databaseUrl;
    if (embedded) {
      const lock = acquireDataDirLock(config.dataDir, 'server');
      teardown.add(() => lock.release());
    }
    const database: Database = await openDatabase({
      databaseUrl: config.databaseUrl,
      pgPoolMax: config.pgPoolMax,
      dataDir: embedded ? path.join(config.dataDir, 'db') : undefined,
    });
    teardown.add(() => database.close());
    await migrateToLatest(database.db);
    const services = await createServices({ config, database, refreshSettings: true });
    teardown.add(() => services.close());
    const app = await buildApp(services, { logger: serverLogger(config.logLevel, config.dataDir) });
    teardown.add(() => app.close());
    let socket: SocketServer | undefined;
    if (database.pglite) {
      const started = await startSocketServer(database.pglite, database.db, config.dataDir);
      teardown.add(() => started.stop());
      socket = started;
    }

    const adminFile = await bootstrapInitialAdmin(database.db, config.dataDir, services.clock.now());
    if (adminFile) {
      app.log.warn({ file: adminFile }, `first start: created a superadmin and a machine key; their one-time credentials are in ${adminFile}`);
    }
    if (socket) app.log.info({ socket: socket.path }, 'embedded database reachable on its Unix socket (psql -h DATA_DIR)');

    await app.listen({ host: config.host, port: config.port });
    services.requestLog.start();
    services.scheduler.start();

    let closing: Promise<boolean> | undefined;
    return {
      app,
      services,
      close() {
        closing ??= teardown.run((e) => app.log.error({ err: e }, 'error during shutdown'));
        return closing;
      },
    };
  } catch (e) {
    await teardown.run(() => {});
    throw e;
  }
}

/**
 * Runs the server until SIGTERM or SIGINT, then shuts down gracefully. Resolves with the exit code:
 * 0 after a clean shutdown, 1 when starting or stopping failed.
 */
export async function serveUntilSignal(config: Config, stderr: (line: string) => void): Promise<number> {
  let server: RunningServer;
  try {
    server = await startServer(config);
  } catch (e) {
    stderr(`gatehouse: cannot start: ${e instanceof Error ? e.message : String(e)}`);
    return 1;
  }
  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    process.once('SIGTERM', () => resolve('SIGTERM'));
    process.once('SIGINT', () => resolve('SIGINT'));
  });
  server.app.log.info({ signal }, 'shutting down');
  const ok = await server.close();
  server.app.log.info('stopped');
  return ok ? 0 : 1;
}
