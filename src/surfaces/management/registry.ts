import type { ManagementHandler } from './define.js';
import backupsFetch from './handlers/backups/fetch.js';
import backupsList from './handlers/backups/list.js';
import databases from './handlers/databases.js';
import errorsRecent from './handlers/errors/recent.js';
import health from './handlers/health.js';
import root from './handlers/root.js';
import stats from './handlers/stats.js';
import tiersAudit from './handlers/tiers/audit.js';
import storeConflicts from './handlers/store/conflicts.js';
import storeUnresolved from './handlers/store/unresolved.js';
import version from './handlers/version.js';

/**
 * Every management endpoint. A handler's path is its file's path under handlers/ (root.ts is the root),
 * so nested paths are subfolders; a test holds the two together.
 */
export const managementHandlers: readonly ManagementHandler[] = Object.freeze([
  root,
  health,
  stats,
  version,
  databases,
  errorsRecent,
  backupsList,
  backupsFetch,
  tiersAudit,
  storeConflicts,
  storeUnresolved,
]);

const byPath = new Map(managementHandlers.map((h) => [h.path, h]));
if (byPath.size !== managementHandlers.length) throw new Error('two management handlers share a path');

export function findManagementHandler(path: string): ManagementHandler | undefined {
  return byPath.get(path);
}
