import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/db/database.js';
import { socketConnectionString, socketFilePath, startSocketServer, type SocketServer } from '../../src/db/socket-server.js';

// The embedded database's Unix socket, in process: the server's own queries and one socket client share
// PGlite's one session. (Runs on its own in-memory PGlite whatever DATABASE_URL says: the socket exists
// only for the embedded database.)
describe('embedded database socket', () => {
  let database: Database;
  let server: SocketServer;
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'gh-sock-'));
    database = await openDatabase({});
    await sql`create table socket_probe (id int primary key)`.execute(database.db);
    server = await startSocketServer(database.pglite!, database.db, dir);
  });
  afterAll(async () => {
    await server?.stop();
    await database?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Resolves when `check` holds, looking every 5 ms (at most `turns` times). */
  async function until(check: () => boolean, turns = 2000): Promise<void> {
    for (let i = 0; i < turns && !check(); i++) await new Promise((r) => setTimeout(r, 5));
    expect(check()).toBe(true);
  }

  /** A client's connect, failing the test instead of hanging when it is never answered. */
  function connect(client: pg.Client): Promise<void> {
    return Promise.race([
      client.connect().then(() => undefined),
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error('connect was never answered')), 10_000).unref()),
    ]);
  }

  async function useOnce(): Promise<void> {
    await until(() => server.stats().sockets === 0);
    const client = new pg.Client(socketConnectionString(dir));
    await connect(client);
    expect((await client.query('select 1 as one')).rows).toEqual([{ one: 1 }]);
    await client.end();
  }

  /** A raw connection sending a startup message; resolves with the server's first bytes (or '' at close). */
  function rawStartup(): Promise<{ first: string; socket: net.Socket }> {
    return new Promise((resolve) => {
      const socket = net.connect(socketFilePath(dir));
      socket.on('error', () => {});
      socket.on('connect', () => {
        const params = Buffer.from('user\0postgres\0database\0postgres\0\0');
        const message = Buffer.alloc(8 + params.length);
        message.writeInt32BE(message.length, 0);
        message.writeInt32BE(196608, 4);
        params.copy(message, 8);
        socket.write(message);
      });
      socket.once('data', (d: Buffer) => resolve({ first: d.toString('latin1'), socket }));
      socket.once('close', () => resolve({ first: '', socket }));
    });
  }

  it('a client refused because the previous one was still leaving does not hold the socket', async () => {
    // Regression: pglite-socket refuses a client that arrives as the previous one leaves, without reading
    // it; the unread startup message kept that connection open for ever and net.Server dropped every later
    // client. A client leaving and the next arriving in the same tick reaches that refusal.
    let refused = false;
    for (let i = 0; i < 20 && !refused; i++) {
      await until(() => server.stats().sockets === 0);
      const leaving = new pg.Client(socketConnectionString(dir));
      leaving.on('error', () => {});
      await connect(leaving);
      await leaving.query('select 1');
      (leaving as unknown as { connection: { stream: net.Socket } }).connection.stream.destroy();
      const arriving = await rawStartup();
      refused = arriving.first.startsWith('Too many connections');
      arriving.socket.destroy();
    }
    expect(refused).toBe(true);
    await until(() => server.stats().sockets === 0);
    await useOnce();
  });

  it('a client that connects while the server is inside a transaction of its own is answered once it commits', async () => {
    // Regression: the socket server took the server's open transaction for the last client's and waited
    // for that client's next message; the new client's startup message stayed queued for ever.
    await useOnce();
    await until(() => server.stats().clients === 0);
    const late = new pg.Client(socketConnectionString(dir));
    let connecting: Promise<void> | undefined;
    await database.db.transaction().execute(async (trx) => {
      await sql`insert into socket_probe (id) values (1)`.execute(trx);
      connecting = connect(late);
      // Its startup message has arrived: queued, or taken and waiting for this transaction to end.
      await until(() => server.stats().queuedMessages > 0 || server.stats().waitingForServer);
    });
    await connecting;
    expect((await late.query('select id from socket_probe')).rows).toEqual([{ id: 1 }]);
    await late.end();
  });

  it("a client disconnecting never rolls back the server's own transaction", async () => {
    await until(() => server.stats().clients === 0);
    const client = new pg.Client(socketConnectionString(dir));
    await connect(client);
    await client.query('select 1');
    await database.db.transaction().execute(async (trx) => {
      await sql`insert into socket_probe (id) values (2)`.execute(trx);
      await client.end();
      await until(() => server.stats().clients === 0);
      await sql`insert into socket_probe (id) values (3)`.execute(trx);
    });
    const rows = await sql<{ id: number }>`select id from socket_probe where id in (2, 3) order by id`.execute(database.db);
    expect(rows.rows).toEqual([{ id: 2 }, { id: 3 }]);
  });

  it("a client's own open transaction is rolled back when it disconnects, and the server's queries go on", async () => {
    await until(() => server.stats().clients === 0);
    const client = new pg.Client(socketConnectionString(dir));
    await connect(client);
    await client.query('begin');
    await client.query('insert into socket_probe (id) values (4)');
    // The server's query waits for the client's transaction; the client goes away without committing.
    const serverRead = sql<{ n: number }>`select count(*)::int as n from socket_probe where id = 4`.execute(database.db);
    await client.end();
    expect((await serverRead).rows).toEqual([{ n: 0 }]);
    await useOnce();
  });
});
