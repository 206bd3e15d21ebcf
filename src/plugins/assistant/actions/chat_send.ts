import { actingUser } from '../../../actions/account/user.js';
import { defineAction } from '../../../actions/define.js';
import { actionError, businessError, validationError } from '../../../http/errors.js';
import { chatFileOf, checkAttachmentLimits, discardAttachments, storeAttachments } from '../attachments.js';
import { addMessage, createConversation, historyFor, linkAttachment, noSuchConversation, ownConversation, setMessageStatus, titleOf } from '../conversations.js';
import { chatCompletion, requestBytes, userTurn } from '../provider.js';
import { assistantConfig } from '../settings.js';

/** The schema's own cap on a message; the setting assistant_max_message_chars is the working one. */
const MESSAGE_HARD_MAX = 100_000;

/**
 * Sends a member's message (and files) to the assistant (DESIGN 12). The action commits its own steps
 * instead of running in one transaction (mutates: false): the member's message and files are kept before
 * the provider is asked, so that a provider failure still leaves the message, marked failed, behind the
 * 502 (its files are then removed: nothing would count them); and
 * no transaction stays open while the provider takes its time.
 *
 * Order: limits (422, nothing written) → the conversation is the member's (else the same 422 as an
 * unknown id) → message and files stored, pending → provider call → reply stored and the message
 * answered, or the message failed and 502 ActionError provider_unavailable.
 */
export default defineAction({
  name: 'assistant/chat_send',
  description: 'Send a message, with optional files as attachments[], to the assistant; answers with its reply. A provider failure is 502 ActionError (data.reason provider_unavailable) and the message is kept as failed',
  auth: { capability: 'write', allow_guest: false },
  mutates: false,
  accepts_files: true,
  input: {
    message: { type: 'text', required: true, min: 1, max_length: MESSAGE_HARD_MAX },
    conversation_id: { type: 'int', min: 1 },
  },
  async run({ input, user, db, clock, settings, attachments, log, driveStorage }) {
    const me = actingUser(user);
    const config = assistantConfig(settings);
    if (config.apiBase === '' || config.model === '') throw businessError('The assistant is not configured', { reason: 'not_configured' });

    const message = input.message.trim();
    if (message === '') throw validationError({ message: 'must not be blank' });
    if (Array.from(message).length > config.maxMessageChars) throw validationError({ message: `must be at most ${config.maxMessageChars} characters` });
    checkAttachmentLimits(attachments, config);
    const files = attachments.map(chatFileOf);
    const turn = userTurn(message, files);
    const turnBytes = requestBytes(config.model, [turn]);
    if (turnBytes > config.maxRequestBytes) {
      throw validationError(
        { [files.some((f) => f.text !== null) ? 'attachments' : 'message']: `the message with its text files comes to ${turnBytes} bytes; the assistant takes at most ${config.maxRequestBytes} per request` },
        'Message too large for the assistant',
      );
    }

    const { blobs } = driveStorage;
    const existingId = input.conversation_id ?? null;
    if (existingId !== null && !(await ownConversation(db, me.usr_user_id, existingId))) throw noSuchConversation();
    const history = existingId === null ? [] : await historyFor(db, blobs, existingId, config.maxRequestBytes - turnBytes);

    const now = clock.now();
    const stored = await db.transaction().execute(async (trx) => {
      if (existingId !== null && !(await ownConversation(trx, me.usr_user_id, existingId, { forUpdate: true }))) throw noSuchConversation();
      const conversationId = existingId ?? (await createConversation(trx, me.usr_user_id, titleOf(message), now));
      const messageId = await addMessage(trx, { conversationId, role: 'user', body: message, status: 'pending', time: now });
      const saved = await storeAttachments(trx, blobs, (fileId, position) => linkAttachment(trx, messageId, fileId, position, now), { userId: me.usr_user_id, time: now }, attachments);
      return { conversationId, messageId, saved };
    });

    const outcome = await chatCompletion(config, [...history, turn]);
    const done = clock.now();
    if (!outcome.ok) {
      await setMessageStatus(db, stored.messageId, 'failed', outcome.failure, done);
      // The files of an unanswered message are not kept (no limit counts them): a retry sends them again.
      await discardAttachments(db, blobs, stored.messageId, done);
      log.warn({ assistant_failure: outcome.failure, provider_status: outcome.status ?? null, conversation_id: stored.conversationId }, 'assistant provider unavailable');
      throw actionError(502, 'The assistant is unavailable; your message was kept but not answered', {
        reason: 'provider_unavailable',
        conversation_id: stored.conversationId,
        user_message_id: stored.messageId,
      });
    }
    const replyId = await db.transaction().execute(async (trx) => {
      await setMessageStatus(trx, stored.messageId, 'answered', null, done);
      return addMessage(trx, { conversationId: stored.conversationId, role: 'assistant', body: outcome.reply, status: 'complete', model: config.model, time: done });
    });
    return {
      data: {
        conversation_id: stored.conversationId,
        message_id: replyId,
        reply: outcome.reply,
        user_message_id: stored.messageId,
        attachments: stored.saved.map((a) => ({ file_id: a.fileId, name: a.name, mime_type: a.mimeType, size_bytes: a.sizeBytes })),
      },
    };
  },
});
