import { looksLikeHtml, markdownText, renderMarkdown } from '../lib/markdown.js';
import { plainText } from '../tiers/gating.js';

/**
 * How a post's or page's body reaches a reader. Bodies are Markdown (the staff editor writes Markdown;
 * the Ghost import stores Ghost's plain text, which reads as Markdown paragraphs), rendered with raw HTML
 * off. A body that is HTML (written before the editor, or sent by an API client) is shown as paragraphs
 * of its text, never as markup. The API's pst_body stays the stored text.
 */

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const escape = (text: string) => text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);

/** The body as safe HTML. */
export function bodyHtml(body: unknown): string {
  if (typeof body !== 'string' || body.trim() === '') return '';
  if (!looksLikeHtml(body)) return renderMarkdown(body);
  return body
    .split(/<\/p>|<br\s*\/?>|\n{2,}/i)
    .map(plainText)
    .filter(Boolean)
    .map((p) => `<p>${escape(p)}</p>`)
    .join('\n');
}

/** The text a reader sees of the body, whitespace folded: for previews and summaries. */
export function bodyText(body: unknown): string {
  if (typeof body !== 'string') return '';
  return looksLikeHtml(body) ? plainText(body) : markdownText(body);
}

/** The first `length` characters of the body's text (the gate preview, tier_gate_preview_length); null at 0. */
export function bodyPreview(body: unknown, length: number): string | null {
  if (length <= 0) return null;
  const text = bodyText(body);
  return text === '' ? null : [...text].slice(0, length).join('');
}

/**
 * A page's body, from pag_component_layout: the editor's `markdown`, else the Ghost import's `plaintext`,
 * else the text of its `html`.
 */
export function pageBodySource(layout: unknown): string {
  const value = typeof layout === 'string' ? safeJson(layout) : layout;
  if (!value || typeof value !== 'object') return '';
  const l = value as { markdown?: unknown; plaintext?: unknown; html?: unknown };
  if (typeof l.markdown === 'string') return l.markdown;
  if (typeof l.plaintext === 'string') return l.plaintext;
  return typeof l.html === 'string' ? plainText(l.html) : '';
}

/** pag_component_layout for a page written in the editor (JSON text, as the jsonb column takes it). */
export function pageLayout(markdown: string): string {
  return JSON.stringify({ markdown });
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}
