import { transactionError } from '../../../../http/errors.js';
import { errorLogPath, readRecentErrorLines } from '../../../../logs/error-log.js';
import { defineManagementHandler } from '../../define.js';

export const DEFAULT_LIMIT = 20;
export const MAX_LIMIT = 200;

/** The `limit` query value: absent means 20, more than 200 means 200, anything not a positive integer is refused. */
function parseLimit(raw: unknown): number {
  if (raw === undefined || raw === '') return DEFAULT_LIMIT;
  if (typeof raw !== 'string' || !/^\d{1,9}$/.test(raw) || Number(raw) < 1) {
    throw transactionError('limit must be a positive integer', 400, { field: 'limit' });
  }
  return Math.min(Number(raw), MAX_LIMIT);
}

export default defineManagementHandler({
  method: 'GET',
  path: 'errors/recent',
  description: `Last N error-log lines matching Fatal, Exception or Error (query limit: default ${DEFAULT_LIMIT}, cap ${MAX_LIMIT})`,
  query: { limit: { type: 'integer', description: `lines wanted: default ${DEFAULT_LIMIT}, at most ${MAX_LIMIT}` } },
  async handle(req, { services }) {
    const limit = parseLimit(req.query.limit);
    const recent = await readRecentErrorLines(errorLogPath(services.config.dataDir), limit);
    return { limit, count: recent.lines.length, lines: recent.lines, file_present: recent.file_present, scan_limited: recent.scan_limited };
  },
});
