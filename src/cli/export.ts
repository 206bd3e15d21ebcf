import path from 'node:path';
import { exportGhostContent } from '../store/ghost/export.js';
import { writeFileAtomically } from '../store/ghost/file.js';
import { CliUsageError, parseCommandArgs, type CommandGroup } from './context.js';
import { USAGE, groupUsage } from './usage.js';

const [CONTENT] = USAGE.export;

/**
 * `gatehouse export content [--out FILE]`: posts, pages and tiers as a Ghost export. Without --out the
 * export itself is the JSON printed on stdout; with it, a summary is.
 */
export const exportCommand: CommandGroup = {
  async run(args, ctx) {
    const [sub, ...rest] = args;
    if (sub !== 'content') throw new CliUsageError(groupUsage(USAGE.export));
    const { values } = parseCommandArgs(rest, { out: { type: 'string' } }, { min: 0, max: 0, usage: CONTENT });
    if (values.out === '') throw new CliUsageError(`--out needs a file name\nusage: ${CONTENT}`);
    return ctx.withServices(async ({ db, clock }) => {
      const { export: exported, notes } = await exportGhostContent(db, clock);
      if (values.out === undefined) return { ...exported };
      const out = path.resolve(values.out);
      await writeFileAtomically(out, `${JSON.stringify(exported, null, 2)}\n`);
      const posts = exported.db[0].data.posts ?? [];
      return { out, posts: posts.filter((p) => p.type === 'post').length, pages: posts.filter((p) => p.type === 'page').length, tiers: (exported.db[0].data.products ?? []).length, notes };
    });
  },
};
