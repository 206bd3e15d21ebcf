import { listBackupFiles } from '../../../../backups/paths.js';
import { defineManagementHandler } from '../../define.js';

export default defineManagementHandler({
  method: 'GET',
  path: 'backups/list',
  description: 'Files in the backups directory with size and date, newest first',
  async handle(_req, { services }) {
    const files = await listBackupFiles(services.config.dataDir);
    return { files, count: files.length, total_bytes: files.reduce((sum, f) => sum + f.size_bytes, 0) };
  },
});
