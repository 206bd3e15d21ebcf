// What a plugin imports from the host: its contract and the helpers made for plugins.
export { definePlugin, requireActivePlugin, type PluginModule, type PluginTaskServices } from './contract.js';
export { withinPlugin } from './routes.js';
