import { CONFLICTS_LIMIT, listSourceConflicts } from '../../../../store/conflicts.js';
import { defineManagementHandler } from '../../define.js';

export default defineManagementHandler({
  method: 'GET',
  path: 'store/conflicts',
  description: `Purchases refused for tier purposes because another billing source was active for the user (newest ${CONFLICTS_LIMIT})`,
  async handle(_req, { services }) {
    const conflicts = await listSourceConflicts(services.db);
    return { count: conflicts.length, conflicts };
  },
});
