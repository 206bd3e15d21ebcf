import { openBackupFile } from '../../../../backups/paths.js';
import { defineManagementHandler } from '../../define.js';

export default defineManagementHandler({
  method: 'GET',
  path: 'backups/fetch',
  description: 'Streams one backup file (query path, as named by backups/list) as application/octet-stream, with no envelope',
  query: { path: { type: 'string', required: true, description: 'a file name as backups/list gives it' } },
  streams: 'application/octet-stream',
  async handle(req, { services, stream }) {
    const file = await openBackupFile(services.config.dataDir, req.query.path);
    stream(file.handle.createReadStream({ autoClose: true }), { contentType: 'application/octet-stream', size: file.size_bytes, filename: file.name });
    return null;
  },
});
