import { definePlugin } from '../../plugin-kit/index.js';
import { agentChannel } from './channel.js';
import { nodeCommand, NODE_USAGE } from './cli.js';
import { AGENT_DOCS } from './docs.js';
import { nodesEndpoint } from './management.js';
import * as nodes0001 from './migrations/0001_nodes.js';

export { queueNodeJob } from './jobs.js';

/**
 * The server_management plugin (DESIGN 12): managed nodes join over the /agent channel with an Ed25519
 * public key, a superadmin approves them (`npx gatehouse node approve ID`), and approved nodes claim the
 * jobs queued for them and report results.
 */
export default definePlugin({
  name: 'server_management',
  migrations: { '0001_nodes': nodes0001 },
  async apiRoutes(api, services) {
    await api.register(async (scope) => agentChannel(scope, services));
  },
  openApi: AGENT_DOCS,
  management: [nodesEndpoint],
  cli: { node: { usage: NODE_USAGE, group: nodeCommand } },
});
