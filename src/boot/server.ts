import net from 'node:net';
import pino from 'pino';
import { prettyFactory } from 'pino-pretty';
import { errorLogPath } from '../logs/error-log.js';
import type { FastifyInstance } from 'fastify';
import { LOG_SERIALIZERS } from '../http/log-lines.js';
import { stdoutLines, type StdoutLines } from './stdout-lines.js';
import { bootstrapInitialAdmin } from '../accounts/initial-admin.js';
import type { Config } from '../config.js';
import { acquireDataDirLock } from '../db/data-dir-lock.js';
import { openDatabase, type Database } from '../db/database.js';
import { createEmbeddedDatabaseIfMissing } from './first-start.js';
import { describeDatabase, embeddedDatabaseDir } from '../db/location.js';
import { migrateWithPlugins } from './plugins.js';
import { startSocketServer, type SocketServer } from '../db/socket-server.js';
import { buildApp } from './app.js';
import { startBackupChannel } from '../backups/channel.js';
import { takeBackup } from '../backups/take.js';
import { pluginModules, startPlugins } from './plugins.js';
import type { Services } from '../services.js';
import { createServices } from './compose.js';
import { WebhookWorker } from '../outbound/webhooks/worker.js';
import { devBanner, initialAdminNote, startLine, type StartNotes } from './start-banner.js';

export interface ServeOptions {
  /**
   * Local development (`npm run dev`): readable log lines instead of JSON, and api_require_https switched
   * off in the embedded database (a setting of that data directory only; PostgreSQL is left alone).
   */
  dev?: boolean;
}

export interface RunningServer {
  app: FastifyInstance;
  services: Services;
  notes: StartNotes;
  /** Resolves once every log line so far has reached standard output. */
  logsWritten(): Promise<void>;
  /** Stops accepting, finishes in-flight requests, flushes logs, closes the database, releases the lock; false if a step failed. */
  close(): Promise<boolean>;
}

/**
 * The server's logger: every line to stdout, and error-level lines also to DATA_DIR/logs/error.log, which
 * management/errors/recent reads.
 */
export function serverLogger(level: string, dataDir: string, opts: { pretty?: boolean } = {}): pino.Logger {
  const errorFile = pino.destination({ dest: errorLogPath(dataDir), mkdir: true, sync: false });
  const out: Pick<StdoutLines, 'write' | 'flush'> = opts.pretty ? prettyStdout() : stdoutLines();
  const streams = pino.multistream([{ level: level as pino.Level, stream: out }, { level: 'error', stream: errorFile }]);
  // logger.flush(cb): the console lines so far are out before cb (the start banner follows them).
  return pino(loggerOptions(level), Object.assign(streams, { flush: (cb: () => void) => out.flush(cb) }));
}

/**
 * Development log lines (`12:00:01 INFO: Server listening at ...`), formatted as they are written: pino-pretty's
 * stream form is asynchronous and would lose the last lines at exit. The error log file stays JSON.
 */
function prettyStdout(): Pick<StdoutLines, 'write' | 'flush'> {
  const prettify = prettyFactory({ colorize: process.stdout.isTTY === true, translateTime: 'SYS:HH:MM:ss', ignore: 'pid,hostname,reqId', singleLine: true });
  return {
    write: (line) => process.stdout.write(prettify(line)),
    flush: (cb) => void process.stdout.write('', () => cb()),
  };
}

/** Nothing may be created (database, lock, logs) when the port is taken: a clear refusal instead. */
export async function assertPortFree(host: string, port: number): Promise<void> {
  if (port === 0) return;
  await new Promise<void>((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', (e: NodeJS.ErrnoException) => {
      const where = `${host}:${port}`;
      if (e.code === 'EADDRINUSE') reject(new Error(`port ${port} is already in use on ${host} (another server is listening at ${where}); stop it or set PORT to a free port`));
      else if (e.code === 'EACCES') reject(new Error(`not allowed to listen on ${where}; set PORT to 1024 or above`));
      else if (e.code === 'EADDRNOTAVAIL') reject(new Error(`cannot listen on ${where}: HOST ${host} is not an address of this machine`));
      else reject(new Error(`cannot listen on ${where}: ${e.message}`));
    });
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve()));
  });
}


/** The server's log level and the serializers of every line (requests as their route pattern, never the URL). */
export function loggerOptions(level: string): pino.LoggerOptions {
  return { level, serializers: LOG_SERIALIZERS };
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

export async function startServer(config: Config, opts: ServeOptions = {}): Promise<RunningServer> {
  // Set up in the order the shutdown undoes backwards: socket clients first (an open transaction of theirs
  // holds up every server query, so in-flight requests and the log flush could not finish), then the app
  // (stops accepting, finishes in-flight requests), services (scheduler, request log flush), database, lock.
  await assertPortFree(config.host, config.port);
  const teardown = new Teardown();
  try {
    const embedded = !config.databaseUrl;
    if (embedded) {
      const lock = acquireDataDirLock(config.dataDir, 'server');
      teardown.add(() => lock.release());
    }
    // A first start creates the embedded database in a child process (see first-start.ts), then opens it.
    if (embedded) await createEmbeddedDatabaseIfMissing(config.dataDir);
    const database: Database = await openDatabase({
      databaseUrl: config.databaseUrl,
      pgPoolMax: config.pgPoolMax,
      dataDir: embedded ? embeddedDatabaseDir(config.dataDir) : undefined,
    });
    teardown.add(() => database.close());
    await migrateWithPlugins(database.db);
    const services = await createServices({ config, database, refreshSettings: true });
    teardown.add(() => services.close());
    const httpsSwitchedOff = Boolean(opts.dev && embedded && services.settings.bool('api_require_https'));
    if (httpsSwitchedOff) await services.settings.set('api_require_https', false);
    const logger = serverLogger(config.logLevel, config.dataDir, { pretty: opts.dev });
    const app = await buildApp(services, { logger });
    teardown.add(() => app.close());
    let socket: SocketServer | undefined;
    if (database.pglite) {
      const started = await startSocketServer(database.pglite, database.db, config.dataDir);
      teardown.add(() => started.stop());
      socket = started;
      // The server owns the embedded database, so `gatehouse backup create` asks it to take the backup.
      const channel = await startBackupChannel(config.dataDir, (folder, progress) => takeBackup(services, folder, progress));
      teardown.add(() => channel.stop());
    }

    const initialAdmin = await bootstrapInitialAdmin(database.db, config.dataDir, services.clock.now());
    if (initialAdmin) {
      app.log.warn({ file: initialAdmin.file }, `first start: created a superadmin and a machine key; their one-time credentials are in ${initialAdmin.file}`);
    }
    if (httpsSwitchedOff) app.log.warn('development mode: api_require_https switched off in this data directory');
    if (socket) app.log.info({ socket: socket.path }, 'embedded database reachable on its Unix socket (psql -h DATA_DIR)');

    await app.listen({ host: config.host, port: config.port });
    services.requestLog.start();
    services.scheduler.start();
    services.memberEmails.start(app.log);
    // Outbound webhooks go out from every node, within a second of being due (DESIGN 15).
    const webhooks = new WebhookWorker({ db: services.db, clock: services.clock, settings: services.settings, log: app.log });
    webhooks.start();
    teardown.add(() => webhooks.stop());
    // Plugins' listeners (the mailbox's SMTP receiver): in the server process only.
    const stopPlugins = await startPlugins(await pluginModules(), services);
    teardown.add(stopPlugins);

    const notes: StartNotes = {
      loginUrl: `${config.baseUrl}/login`,
      database: describeDatabase(config),
      initialAdmin: initialAdminNote(config.dataDir, initialAdmin),
      httpsRequired: services.settings.bool('api_require_https'),
      httpsSwitchedOff,
    };
    let closing: Promise<boolean> | undefined;
    return {
      app,
      services,
      notes,
      logsWritten: () => new Promise((resolve) => logger.flush(() => resolve())),
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
export async function serveUntilSignal(config: Config, stderr: (line: string) => void, opts: ServeOptions = {}): Promise<number> {
  let server: RunningServer;
  try {
    server = await startServer(config, opts);
  } catch (e) {
    stderr(`gatehouse: cannot start: ${e instanceof Error ? e.message : String(e)}`);
    return 1;
  }
  // The banner is the last thing on the screen, after the log lines of the start.
  await server.logsWritten();
  for (const line of opts.dev ? devBanner(server.notes) : [startLine(server.notes)]) stderr(line);
  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    process.once('SIGTERM', () => resolve('SIGTERM'));
    process.once('SIGINT', () => resolve('SIGINT'));
  });
  server.app.log.info({ signal }, 'shutting down');
  const ok = await server.close();
  server.app.log.info('stopped');
  return ok ? 0 : 1;
}
