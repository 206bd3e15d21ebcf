import { defineManagementHandler } from '../../surfaces/management/define.js';
import { listNodes } from './nodes.js';

/** GET /management/nodes: every managed node, its last contact and its job counts by status. */
export const nodesEndpoint = defineManagementHandler({
  method: 'GET',
  path: 'nodes',
  description: 'Managed nodes (plugin server_management): status, fingerprint, last contact and job counts',
  async handle(_req, { services }) {
    const nodes = await listNodes(services.db);
    return { count: nodes.length, nodes };
  },
});
