import { backupSourceOf, createBackup } from '../backups/create.js';
import { USAGE } from './usage.js';
import { CliUsageError, parseCommandArgs, type CommandGroup } from './context.js';

const [CREATE] = USAGE.backup;

/**
 * `backup create`: a consistent dump in DATA_DIR/backups: pg_dump on PostgreSQL, a dumpDataDir archive of
 * the embedded database. While a server owns the embedded database the command refuses: pg_dump through
 * the socket would change settings of the one session PGlite shares with the server (and Debian's
 * pg_dump 15 refuses PGlite's PostgreSQL 18 anyway).
 */
export const backupCommand: CommandGroup = {
  async run(args, ctx) {
    const [sub, ...rest] = args;
    if (sub !== 'create') throw new CliUsageError(`usage: ${CREATE}`);
    parseCommandArgs(rest, {}, { min: 0, max: 0, usage: CREATE });
    return ctx.withServices(async (services) => {
      if (!services.config.databaseUrl && !services.database.pglite) {
        throw new Error('the running server owns the embedded database; stop it, then run `gatehouse backup create` again');
      }
      const source = backupSourceOf(services);
      const result = await createBackup(source, services.config.dataDir, (line) => ctx.io.stderr(`${line}\n`));
      return { path: result.path, size_bytes: result.size_bytes };
    });
  },
};
