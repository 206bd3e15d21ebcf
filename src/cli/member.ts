import { createReadStream, createWriteStream } from 'node:fs';
import { rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { once } from 'node:events';
import { CliUsageError, Exited, parseCommandArgs, type CommandGroup } from './context.js';
import { USAGE, groupUsage } from './usage.js';

const [IMPORT, EXPORT] = USAGE.member;

/**
 * `member import FILE [--dry-run]`: a member CSV (Ghost's export columns, DESIGN 16) read as a stream and
 * applied in batches, with progress on stderr and the summary (counts, each skipped row with its
 * reason) as JSON on stdout; --dry-run only reports what would happen. A file that is not a member CSV
 * exits 2 and changes nothing.
 *
 * `member export [--out FILE]`: every member as a CSV in the same columns, on stdout, or written to FILE
 * (atomically) with a JSON summary on stdout.
 */
export const memberCommand: CommandGroup = {
  async run(args, ctx) {
    const [sub, ...rest] = args;
    if (sub === 'import') {
      const { positionals, values } = parseCommandArgs(rest, { 'dry-run': { type: 'boolean' } }, { min: 1, max: 1, usage: IMPORT });
      const file = path.resolve(positionals[0]!);
      const size = await stat(file).then(
        (s) => (s.isFile() ? s.size : null),
        () => null,
      );
      if (size === null) throw new CliUsageError(`no file ${file}`);
      const dryRun = values['dry-run'] === true;
      const [{ importMembers }, { memberImportDeps }, { CsvError }, { HeaderError }, { progressPrinter }] = await Promise.all([
        import('../accounts/member-import/import.js'),
        import('../actions/members/import-shared.js'),
        import('../lib/csv.js'),
        import('../accounts/member-import/columns.js'),
        import('../backups/progress.js'),
      ]);
      const print = progressPrinter((text) => ctx.io.stderr(text), { prefix: dryRun ? 'member import (dry run)' : 'member import', tty: process.stderr.isTTY === true });
      return ctx.withServices(async (services) => {
        try {
          const summary = await importMembers(memberImportDeps(services, null), createReadStream(file), {
            dryRun,
            onProgress: (p) => print({ kind: 'step', fraction: size === 0 ? 1 : p.bytesRead / size, label: `${p.rows} rows, ${p.counts.error} skipped` }),
          });
          if (process.stderr.isTTY) ctx.io.stderr('\n');
          const { listed: _listed, ...rest } = summary;
          return { file, ...rest };
        } catch (e) {
          if (e instanceof CsvError || e instanceof HeaderError) throw new CliUsageError(`${file} is not a member CSV: ${e.message}`);
          throw e;
        }
      });
    }
    if (sub === 'export') {
      const { values } = parseCommandArgs(rest, { out: { type: 'string' } }, { min: 0, max: 0, usage: EXPORT });
      const { exportMembers } = await import('../accounts/member-import/export.js');
      if (values.out === undefined) {
        const members = await ctx.withServices(({ db }) => exportMembers(db, (text) => ctx.io.stdout(text)));
        ctx.io.stderr(`gatehouse: exported ${members} members\n`);
        return new Exited(0);
      }
      const out = path.resolve(values.out);
      const temp = `${out}.${process.pid}.tmp`;
      const members = await ctx.withServices(async ({ db }) => {
        const stream = createWriteStream(temp);
        try {
          const n = await exportMembers(db, async (text) => {
            if (!stream.write(text)) await once(stream, 'drain');
          });
          stream.end();
          await once(stream, 'finish');
          await rename(temp, out);
          return n;
        } catch (e) {
          stream.destroy();
          await rm(temp, { force: true });
          throw e;
        }
      });
      return { file: out, members };
    }
    throw new CliUsageError(groupUsage(USAGE.member));
  },
};
