import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onPostgres } from '../helpers/database.js';
import { freePort, pollUntil, programEnv, scratchPostgres, startServerProcess, tempDataDir, type ServerProcess } from '../helpers/processes.js';

// `npm start`'s console at its level (info): a request is one JSON line on standard output, written in
// batches off the request path; a burst of requests loses none of its lines, the last ones included when
// the server stops straight after.
describe(`the server's console lines at log level info (${onPostgres ? 'PostgreSQL' : 'PGlite'})`, () => {
  let server: ServerProcess;
  let cleanup: () => Promise<void>;

  beforeAll(async () => {
    const data = tempDataDir('gh-srv-log-');
    const db = onPostgres ? await scratchPostgres() : undefined;
    server = await startServerProcess(programEnv({ DATA_DIR: data.dir, PORT: String(await freePort()), DATABASE_URL: db?.url, LOG_LEVEL: 'info' }));
    cleanup = async () => {
      await server.stop('SIGKILL');
      await db?.drop();
      data.remove();
    };
  });
  afterAll(async () => cleanup?.());

  it("writes an idle server's line without waiting for more (lines are batched, not held)", async () => {
    expect((await fetch(`${server.url}/idle-probe`, { method: 'POST' })).status).toBe(404);
    const seen = await pollUntil(async () => (server.output().includes('"method":"POST"') ? true : undefined), 2_000, 20);
    expect(seen).toBe(true);
  });

  it('writes one "request completed" line per request, none lost when the server stops right after a burst', async () => {
    const N = 400;
    const statuses = await Promise.all(Array.from({ length: N }, (_, i) => fetch(`${server.url}/no-such-page-${i}`).then(async (r) => (await r.arrayBuffer(), r.status))));
    expect(statuses.every((s) => s === 404)).toBe(true);
    expect(await server.stop('SIGTERM')).toBe(0);
    const lines = server
      .output()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { msg: string; req?: { method: string; route: string | null }; res?: { statusCode: number } });
    const completed = lines.filter((l) => l.msg === 'request completed' && l.res?.statusCode === 404 && l.req?.method === 'GET');
    expect(completed).toHaveLength(N);
    expect(completed.every((l) => l.req?.route === null)).toBe(true);
    expect(lines.some((l) => l.msg === 'incoming request')).toBe(false);
    expect(lines.at(-1)?.msg).toBe('stopped');
  });
});
