import { actingUser } from '../../../actions/account/user.js';
import { defineAction } from '../../../actions/define.js';
import { noSuchConversation, ownConversation, threadOf } from '../conversations.js';

/** Reads one of the member's conversations; anyone else's answers exactly as an unknown id. */
export default defineAction({
  name: 'assistant/chat_thread',
  description: 'Read one of your assistant conversations: its messages in order, with their status and attachments',
  auth: { capability: 'read', allow_guest: false },
  mutates: false,
  input: { conversation_id: { type: 'int', required: true, min: 1 } },
  async run({ input, user, db }) {
    const me = actingUser(user);
    const conversation = await ownConversation(db, me.usr_user_id, input.conversation_id);
    if (!conversation) throw noSuchConversation();
    return { data: await threadOf(db, conversation) };
  },
});
