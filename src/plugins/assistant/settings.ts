import type { SettingDefinition } from '../../settings/definitions.js';
import type { Settings } from '../../settings/store.js';

/** The multipart layer's own caps (src/surfaces/actions/dispatch.ts): the settings cannot go beyond them. */
const MULTIPART_MAX_FILES = 10;
const MULTIPART_MAX_FILE_BYTES = 10 * 1024 * 1024;

/** The assistant plugin's settings; the API key is secret (never printed or exported). */
export const assistantSettings: SettingDefinition[] = [
  {
    name: 'assistant_api_base',
    type: 'string',
    default: '',
    description: 'Base URL of the OpenAI-compatible API, e.g. https://api.openai.com/v1 (chat_send posts to {base}/chat/completions); empty: the assistant is not configured',
    pattern: /^(|https?:\/\/[^\s?#]+)$/,
    patternHint: 'an http(s) URL without query or fragment',
  },
  { name: 'assistant_model', type: 'string', default: '', maxLength: 200, description: 'The model named in each chat-completions request' },
  { name: 'assistant_api_key', type: 'string', default: '', secret: true, description: 'Bearer token for the chat-completions API (empty: no Authorization header)' },
  { name: 'assistant_timeout_ms', type: 'integer', default: 60_000, min: 50, max: 600_000, description: 'How long one chat-completions request may take, milliseconds, answer included' },
  { name: 'assistant_max_message_chars', type: 'integer', default: 8000, min: 1, max: 100_000, description: 'Longest chat message a member may send, characters' },
  { name: 'assistant_max_attachments', type: 'integer', default: 5, min: 0, max: MULTIPART_MAX_FILES, description: 'Most files one chat message may carry' },
  {
    name: 'assistant_max_attachment_bytes',
    type: 'integer',
    default: 2 * 1024 * 1024,
    min: 1,
    max: MULTIPART_MAX_FILE_BYTES,
    description: 'Largest file a chat message may carry, bytes',
  },
  {
    name: 'assistant_max_request_bytes',
    type: 'integer',
    default: 512 * 1024,
    min: 1024,
    max: 64 * 1024 * 1024,
    description: 'Largest request body sent to the provider, bytes: the oldest turns of a conversation are left out to fit; a new message (with its inlined text files) that alone exceeds it is refused',
  },
];

export interface AssistantConfig {
  apiBase: string;
  model: string;
  apiKey: string;
  timeoutMs: number;
  maxMessageChars: number;
  maxAttachments: number;
  maxAttachmentBytes: number;
  maxRequestBytes: number;
}

export function assistantConfig(settings: Settings): AssistantConfig {
  return {
    apiBase: settings.string('assistant_api_base'),
    model: settings.string('assistant_model'),
    apiKey: settings.string('assistant_api_key'),
    timeoutMs: settings.int('assistant_timeout_ms'),
    maxMessageChars: settings.int('assistant_max_message_chars'),
    maxAttachments: settings.int('assistant_max_attachments'),
    maxAttachmentBytes: settings.int('assistant_max_attachment_bytes'),
    maxRequestBytes: settings.int('assistant_max_request_bytes'),
  };
}
