import { afterAll, beforeAll } from 'vitest';
import { onPostgres } from './database.js';
import { freePort, programEnv, runGatehouse, scratchPostgres, startServerProcess, tempDataDir, type CliResult, type ServerProcess } from './processes.js';

/**
 * A site for CLI tests, set up before the suite and removed after: on PostgreSQL a scratch database the
 * commands reach directly, on PGlite a running server whose socket they reach. `cli(...)` runs one command.
 */
export function useCliSite(prefix: string): { cli: (...args: string[]) => Promise<CliResult> } {
  let env: NodeJS.ProcessEnv;
  let cleanup: (() => Promise<void>) | undefined;
  beforeAll(async () => {
    const data = tempDataDir(prefix);
    if (onPostgres) {
      const db = await scratchPostgres();
      env = programEnv({ DATA_DIR: data.dir, DATABASE_URL: db.url });
      cleanup = async () => {
        await db.drop();
        data.remove();
      };
    } else {
      env = programEnv({ DATA_DIR: data.dir, PORT: String(await freePort()) });
      const server: ServerProcess = await startServerProcess(env);
      cleanup = async () => {
        await server.stop();
        data.remove();
      };
    }
  });
  afterAll(async () => cleanup?.());
  return { cli: (...args: string[]) => runGatehouse(args, env) };
}
