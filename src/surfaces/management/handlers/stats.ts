import { backupProfiles } from '../../../backups/profiles.js';
import { serviceVersion } from '../../../version.js';
import { defineManagementHandler } from '../define.js';
import { cronHealth, databaseLiveness, diskUsage, listDatabases, loadAverage, memoryUsage, uptime } from '../system.js';

export default defineManagementHandler({
  method: 'GET',
  path: 'stats',
  description: 'Disk, memory, load, uptime, database liveness, version, databases, cron health and backup profiles',
  async handle(_req, { services }) {
    const [disk, database, databases, cron, backups] = await Promise.all([
      diskUsage(services.config.dataDir),
      databaseLiveness(services.database),
      listDatabases(services.database).catch(() => null),
      cronHealth(services),
      backupProfiles(services),
    ]);
    return {
      version: serviceVersion(),
      disk,
      memory: memoryUsage(),
      load: loadAverage(),
      uptime: uptime(),
      database,
      databases,
      cron,
      backups,
    };
  },
});
