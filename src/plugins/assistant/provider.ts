import type { ChatFile } from './attachments.js';
import type { AssistantConfig } from './settings.js';

/** One message of an OpenAI-compatible chat-completions request. */
export interface ProviderMessage {
  role: 'user' | 'assistant';
  content: string | Array<{ type: 'text'; text: string }>;
}

/** Why the provider gave no usable answer (kept on the member's failed message). */
export type ProviderFailure = 'timeout' | 'network' | 'http_status' | 'malformed';

export type ProviderOutcome = { ok: true; reply: string } | { ok: false; failure: ProviderFailure; status?: number };

/** The most of a provider's answer that is read; a longer one counts as malformed. */
const MAX_ANSWER_BYTES = 4 * 1024 * 1024;

/**
 * A member's turn: the message alone, or the message followed by one text part per file. A text file's
 * content is inlined under its name; any other file is described by name, media type and size (its
 * bytes are not sent).
 */
export function userTurn(message: string, files: readonly ChatFile[]): ProviderMessage {
  if (files.length === 0) return { role: 'user', content: message };
  return {
    role: 'user',
    content: [
      { type: 'text', text: message },
      ...files.map((f, i) => ({
        type: 'text' as const,
        text:
          f.text !== null
            ? `Attachment ${i + 1}: ${f.name} (${f.mimeType}, ${f.sizeBytes} bytes)\n${f.text}`
            : `Attachment ${i + 1}: ${f.name} (${f.mimeType}, ${f.sizeBytes} bytes); not a text file, its content is not included`,
      })),
    ],
  };
}

/** The exact size in bytes of the request body {model, messages} as it will be sent. */
export function requestBytes(model: string, messages: readonly ProviderMessage[]): number {
  const empty = Buffer.byteLength(JSON.stringify({ model, messages: [] }));
  const items = messages.reduce((sum, m) => sum + messageBytes(m), 0);
  return empty + items + Math.max(0, messages.length - 1);
}

export function messageBytes(message: ProviderMessage): number {
  return Buffer.byteLength(JSON.stringify(message));
}

export function chatCompletionsUrl(apiBase: string): string {
  return `${apiBase.replace(/\/+$/, '')}/chat/completions`;
}

/** The answer's text: choices[0].message.content as a string (or as text parts). */
function replyOf(body: unknown): string | null {
  const choices = (body as { choices?: unknown } | null)?.choices;
  if (!Array.isArray(choices) || choices.length === 0) return null;
  const content = (choices[0] as { message?: { content?: unknown } } | null)?.message?.content;
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    const texts = content.map((p) => (p as { type?: unknown; text?: unknown } | null)?.text);
    if (texts.length > 0 && texts.every((t): t is string => typeof t === 'string')) return texts.join('');
  }
  return null;
}

async function readCapped(response: Response): Promise<string | null> {
  if (!response.body) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength;
    if (size > MAX_ANSWER_BYTES) {
      await response.body.cancel().catch(() => {});
      return null;
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * One chat-completions call, within the configured timeout (the answer's body included). Every way it
 * can fail is an outcome, never an exception; the API key goes only into the Authorization header.
 */
export async function chatCompletion(config: AssistantConfig, messages: readonly ProviderMessage[]): Promise<ProviderOutcome> {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
  if (config.apiKey !== '') headers.authorization = `Bearer ${config.apiKey}`;
  try {
    const response = await fetch(chatCompletionsUrl(config.apiBase), {
      method: 'POST',
      headers,
      body: JSON.stringify({ model: config.model, messages }),
      signal: AbortSignal.timeout(config.timeoutMs),
      redirect: 'error',
    });
    if (!response.ok) {
      await response.body?.cancel().catch(() => {});
      return { ok: false, failure: 'http_status', status: response.status };
    }
    const text = await readCapped(response);
    if (text === null) return { ok: false, failure: 'malformed' };
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return { ok: false, failure: 'malformed' };
    }
    const reply = replyOf(parsed);
    return reply === null ? { ok: false, failure: 'malformed' } : { ok: true, reply };
  } catch (e) {
    const name = (e as { name?: unknown } | null)?.name;
    return { ok: false, failure: name === 'TimeoutError' || name === 'AbortError' ? 'timeout' : 'network' };
  }
}
