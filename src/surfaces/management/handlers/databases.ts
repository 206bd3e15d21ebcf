import { listDatabases } from '../system.js';
import { defineManagementHandler } from '../define.js';

export default defineManagementHandler({
  method: 'GET',
  path: 'databases',
  description: 'Databases accessible to the site',
  async handle(_req, { services }) {
    return listDatabases(services.database);
  },
});
