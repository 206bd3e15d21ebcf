import { defineManagementHandler } from '../../define.js';

export default defineManagementHandler({
  method: 'GET',
  path: 'tiers/audit',
  description: 'Tier feature coverage: for every active tier, the declared feature keys it has no explicit value for',
  async handle(_req, { services }) {
    return services.tiers.auditReport();
  },
});
