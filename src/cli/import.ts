import { GhostExportError } from '../store/ghost/format.js';
import { readGhostExportFile } from '../store/ghost/file.js';
import { importGhostContent } from '../store/ghost/import.js';
import { CliUsageError, parseCommandArgs, type CommandGroup } from './context.js';
import { USAGE, groupUsage } from './usage.js';

const [GHOST] = USAGE.import;

/** `gatehouse import ghost EXPORT.json` (DESIGN 16): tiers, posts and pages from a Ghost export; prints the report. */
export const importCommand: CommandGroup = {
  async run(args, ctx) {
    const [sub, ...rest] = args;
    if (sub !== 'ghost') throw new CliUsageError(groupUsage(USAGE.import));
    const { positionals } = parseCommandArgs(rest, {}, { min: 1, max: 1, usage: GHOST });
    let parsed;
    try {
      // Read and checked before the database opens: a wrong file changes nothing.
      parsed = await readGhostExportFile(positionals[0] as string);
    } catch (e) {
      if (e instanceof GhostExportError) throw new CliUsageError(e.message);
      throw e;
    }
    return ctx.withServices(async ({ db, clock, tiers }) => ({ ...(await importGhostContent({ db, clock, registry: tiers.registry }, parsed.meta, parsed.data)) }));
  },
};
