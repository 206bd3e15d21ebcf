import { definePlugin } from '../../plugin-kit/index.js';
import chatSend from './actions/chat_send.js';
import chatThread from './actions/chat_thread.js';
import * as conversations from './migrations/0001_conversations.js';
import { assistantSettings } from './settings.js';

/** The assistant plugin (DESIGN 12): chat with an OpenAI-compatible model, conversations kept per member. */
export default definePlugin({
  name: 'assistant',
  settings: assistantSettings,
  migrations: { '0001_conversations': conversations },
  actions: [chatSend, chatThread],
});
