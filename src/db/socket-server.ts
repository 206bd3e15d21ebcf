import { existsSync, unlinkSync } from 'node:fs';
import type { Server, Socket } from 'node:net';
import path from 'node:path';
import type { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import type { Kysely } from 'kysely';
import type { DB } from './types.js';
import { NotificationTap } from './notification-tap.js';
import { deliverSocketNotification } from './pglite-change-feed.js';

/** The name psql and node-postgres look for in a socket directory (`-h DATA_DIR`, `host=DATA_DIR`). */
export const SOCKET_FILE_NAME = '.s.PGSQL.5432';
// One client at a time. PGlite is one backend session, and pglite-socket keeps a client's messages
// together only inside a transaction block: two clients' extended-protocol exchanges (Parse, Bind,
// Execute) would otherwise interleave and overwrite each other's unnamed statement. A second client is
// refused at connect; the CLI retries until the first is done.
const MAX_CONNECTIONS = 1;
// Unix socket paths are limited to about 107 bytes on Linux.
const MAX_SOCKET_PATH = 100;
// A client that vanished mid-exchange (no Sync) must not hold the database forever.
const ABANDONED_EXCHANGE_MS = 10_000;
// A client silent this long is disconnected (its open transaction rolled back), so a forgotten psql
// transaction stalls the server for at most this long.
const IDLE_CLIENT_MS = 60_000;

export function socketFilePath(dataDir: string): string {
  return path.join(dataDir, SOCKET_FILE_NAME);
}

/** A node-postgres connection string reaching the server's socket in dataDir. */
export function socketConnectionString(dataDir: string): string {
  return `postgres://postgres@/postgres?host=${encodeURIComponent(dataDir)}`;
}

/** Holds the Kysely driver's one connection until released (the embedded dialect serialises on it). */
function holdConnection(db: Kysely<DB>): Promise<() => void> {
  return new Promise((resolveHold, rejectHold) => {
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    db.connection()
      .execute(async () => {
        resolveHold(release);
        await released;
      })
      .catch(rejectHold);
  });
}

/**
 * PGlite is one backend session shared by the server's queries and by socket clients. The socket
 * server serialises only its own clients, so without this gate a server query could land inside a
 * client's transaction (or between its Parse and Sync), and a client's query inside a server
 * transaction. The gate makes a socket client's whole exchange, up to Sync or a simple Query with no
 * open transaction block, hold the same connection the server's Kysely queries wait for.
 */
class SharedSession {
  private release: (() => void) | null = null;
  private entering: Promise<void> | null = null;
  private lastMessageType = 0;
  private abandonTimer: NodeJS.Timeout | undefined;
  /**
   * The session's notifications raised by a client's writes come back in that client's bytes: this
   * process's change feeds get them there (and the client, which did not listen, does not).
   */
  private readonly tap: NotificationTap;

  constructor(
    private readonly pglite: PGlite,
    private readonly db: Kysely<DB>,
  ) {
    this.tap = new NotificationTap((channel, payload) => deliverSocketNotification(pglite, channel, payload));
  }

  private async enter(): Promise<void> {
    clearTimeout(this.abandonTimer);
    if (this.release) return;
    this.entering ??= holdConnection(this.db).then((release) => {
      this.release = release;
      this.entering = null;
    });
    await this.entering;
  }

  private leaveIfIdle(): void {
    if (!this.release) return;
    // 'S' Sync and 'Q' Query end an exchange; 'X' Terminate and the startup packet (first byte 0) too.
    const ended = [0x53, 0x51, 0x58, 0x00].includes(this.lastMessageType);
    if (ended && !this.pglite.isInTransaction()) {
      this.leave();
      return;
    }
    this.abandonTimer = setTimeout(() => {
      if (!this.pglite.isInTransaction()) this.leave();
    }, ABANDONED_EXCHANGE_MS);
    this.abandonTimer.unref();
  }

  private leave(): void {
    clearTimeout(this.abandonTimer);
    const release = this.release;
    this.release = null;
    release?.();
  }

  /** True while a socket client's message waits for the server's queries (and transactions) to finish. */
  get waitingForServer(): boolean {
    return this.entering !== null;
  }

  /** The PGlite the socket server sees: its exclusive sections go through the gate. */
  view(): PGlite {
    const { pglite } = this;
    const overrides: Partial<Record<keyof PGlite, unknown>> = {
      // The socket server asks this to keep a client's transaction to that client: while one is open it
      // runs only that client's messages, and it rolls it back when the client disconnects. A transaction
      // of the server's own (the gate not held) is none of its business: reporting it stranded a new
      // client's first message in the queue (the queue waited for the last client, long gone, and
      // nothing woke it), so that connect never completed.
      isInTransaction: () => this.release !== null && pglite.isInTransaction(),
      runExclusive: async <T>(fn: () => Promise<T>): Promise<T> => {
        await this.enter();
        try {
          return await pglite.runExclusive(fn);
        } finally {
          this.leaveIfIdle();
        }
      },
      execProtocolRawStream: (message: Uint8Array, opts: Parameters<PGlite['execProtocolRawStream']>[1]) => {
        this.lastMessageType = message[0] ?? 0;
        const onRawData = opts.onRawData;
        return pglite.execProtocolRawStream(message, {
          ...opts,
          onRawData: (data: Uint8Array) => {
            const passed = this.tap.filter(data);
            if (passed.length > 0) onRawData(passed);
          },
        });
      },
      // Used by the socket server to roll back the transaction of a client that disconnected.
      exec: async (query: string) => {
        await this.enter();
        try {
          return await pglite.exec(query);
        } finally {
          this.lastMessageType = 0x51;
          this.leaveIfIdle();
        }
      },
    };
    return new Proxy(pglite, {
      get(target, prop) {
        if (prop in overrides) return overrides[prop as keyof PGlite];
        const value: unknown = Reflect.get(target, prop, target);
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
  }

  close(): void {
    this.leave();
  }
}

export interface SocketServerStats {
  /** Clients connected (at most one). */
  clients: number;
  /** Connections open at the socket level (a refused client's, until it is closed, counts here). */
  sockets: number;
  /** Client messages queued, not yet taken. */
  queuedMessages: number;
  /** A taken message waits for the server's own queries to finish. */
  waitingForServer: boolean;
}

export interface SocketServer {
  readonly path: string;
  stats(): SocketServerStats;
  stop(): Promise<void>;
}

/**
 * pglite-socket refuses a client over its limit by writing "Too many connections" and ending its side,
 * without ever reading: the client's startup message stays unread, so the socket never sees the client's
 * end and never closes, and net.Server (whose maxConnections pglite-socket sets to the same 1) then drops
 * every later client: no CLI command could reach the database until the server restarted. That refusal
 * happens when a client arrives just as the previous one leaves. A connection whose writing side has
 * ended is closed here; the protocol never half-closes, so a served client loses nothing.
 * Returns the open connections.
 */
function closeRefusedSockets(server: PGLiteSocketServer): ReadonlySet<Socket> {
  // The net.Server is not part of pglite-socket's API; it exists once start() has resolved.
  const netServer = (server as unknown as { server: Server | null }).server;
  if (!netServer) throw new Error('pglite-socket: no net.Server after start()');
  const open = new Set<Socket>();
  netServer.on('connection', (socket: Socket) => {
    open.add(socket);
    socket.once('close', () => open.delete(socket));
    socket.once('finish', () => socket.destroy());
  });
  return open;
}

/** Serves the embedded database on DATA_DIR/.s.PGSQL.5432 for the CLI and psql while the server runs. */
export async function startSocketServer(pglite: PGlite, db: Kysely<DB>, dataDir: string): Promise<SocketServer> {
  const file = socketFilePath(dataDir);
  if (file.length > MAX_SOCKET_PATH) {
    throw new Error(`DATA_DIR is too long for a Unix socket path (${file.length} > ${MAX_SOCKET_PATH} bytes): ${file}`);
  }
  // Left behind by a server that crashed; we hold the data directory lock, so it is not in use.
  if (existsSync(file)) unlinkSync(file);
  const session = new SharedSession(pglite, db);
  const server = new PGLiteSocketServer({ db: session.view(), path: file, maxConnections: MAX_CONNECTIONS, idleTimeout: IDLE_CLIENT_MS });
  await server.start();
  const sockets = closeRefusedSockets(server);
  return {
    path: file,
    stats() {
      const { activeConnections, queuedQueries } = server.getStats();
      return { clients: activeConnections, sockets: sockets.size, queuedMessages: queuedQueries, waitingForServer: session.waitingForServer };
    },
    async stop() {
      await server.stop();
      session.close();
      try {
        unlinkSync(file);
      } catch {
        // net.Server removes it on close
      }
    },
  };
}
