import path from 'node:path';
import { CliUsageError, parseCommandArgs, type CliIo, type CommandGroup } from './context.js';
import { USAGE, groupUsage } from './usage.js';

const [CREATE, RESTORE] = USAGE.backup;

/** The backup's progress on stderr: a bar redrawn in place on a terminal, a line per tenth elsewhere. */
async function stderrProgress(io: CliIo) {
  const { progressPrinter } = await import('../backups/progress.js');
  return progressPrinter((text) => io.stderr(text), { prefix: 'backup', tty: process.stderr.isTTY === true });
}

/**
 * `backup create`: a consistent dump in DATA_DIR/backups: pg_dump on PostgreSQL, a dumpDataDir archive of
 * the embedded database. While a server owns the embedded database, the server takes it (asked over its
 * backup socket, see backups/channel.ts) and the command relays its progress; otherwise the command opens
 * the data directory and takes it itself.
 *
 * `backup restore FILE`: a pg_dump archive into the empty PostgreSQL database of DATABASE_URL, or an
 * embedded database archive into DATA_DIR/db, which no server may be running on (exit 2 while one is).
 */
export const backupCommand: CommandGroup = {
  async run(args, ctx) {
    const [sub, ...rest] = args;
    if (sub === 'create') {
      parseCommandArgs(rest, {}, { min: 0, max: 0, usage: CREATE });
      const [{ liveLockHolder }, { backupSocketPath, requestServerBackup }, { takeBackup }] = await Promise.all([
        import('../db/data-dir-lock.js'),
        import('../backups/channel.js'),
        import('../backups/take.js'),
      ]);
      const progress = await stderrProgress(ctx.io);
      const { dataDir, databaseUrl } = ctx.config;
      const holder = databaseUrl ? null : liveLockHolder(dataDir);
      if (holder?.role === 'server') {
        ctx.io.stderr(`gatehouse: using the embedded database in ${dataDir} (DATA_DIR), backed up by the running server (pid ${holder.pid}) through ${backupSocketPath(dataDir)}\n`);
        return { ...(await requestServerBackup(dataDir, '', progress)) };
      }
      // PostgreSQL, or a data directory no server runs on (takeBackup asks a server that started meanwhile).
      return { ...(await ctx.withServices((services) => takeBackup(services, '', progress))) };
    }
    if (sub === 'restore') {
      const { positionals } = parseCommandArgs(rest, {}, { min: 1, max: 1, usage: RESTORE });
      const file = path.resolve(positionals[0]!);
      const { RestoreInputError, restoreIntoDataDir, restoreIntoPostgres } = await import('../backups/restore.js');
      const [{ describeDatabase }, progress] = await Promise.all([import('../db/location.js'), stderrProgress(ctx.io)]);
      ctx.io.stderr(`gatehouse: using ${describeDatabase(ctx.config)}, as the restore's target\n`);
      try {
        const result = ctx.config.databaseUrl
          ? await restoreIntoPostgres(file, ctx.config.databaseUrl, progress, ctx.config.dataDir)
          : await restoreIntoDataDir(file, ctx.config.dataDir, progress);
        return { ...result };
      } catch (e) {
        if (e instanceof RestoreInputError) throw new CliUsageError(e.message);
        throw e;
      }
    }
    throw new CliUsageError(groupUsage(USAGE.backup));
  },
};
