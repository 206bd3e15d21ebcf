import MarkdownIt from 'markdown-it';

/**
 * Post and page bodies as HTML: Markdown rendered by markdown-it with raw HTML off, so every tag in the
 * output is one markdown-it made and every character of the source is escaped (safe by construction:
 * no sanitizer needed). Its link check refuses javascript:, vbscript:, file: and non-image data: URLs.
 * Links off the site get rel="noopener nofollow"; images load lazily.
 */
const md = new MarkdownIt({ html: false, linkify: true, typographer: false, breaks: false });

const defaultLinkOpen = md.renderer.rules.link_open ?? ((tokens, idx, options, _env, self) => self.renderToken(tokens, idx, options));
md.renderer.rules.link_open = (tokens, idx, options, env, self) => {
  const href = tokens[idx]!.attrGet('href') ?? '';
  if (/^[a-z][a-z0-9+.-]*:|^\/\//i.test(href)) tokens[idx]!.attrSet('rel', 'noopener nofollow');
  return defaultLinkOpen(tokens, idx, options, env, self);
};
const defaultImage = md.renderer.rules.image!;
md.renderer.rules.image = (tokens, idx, options, env, self) => {
  tokens[idx]!.attrSet('loading', 'lazy');
  return defaultImage(tokens, idx, options, env, self);
};

/**
 * Whether a stored body is HTML rather than Markdown: it starts with a block-level tag (bodies written
 * before the Markdown editor, or by API clients that send markup). Those are shown as text paragraphs,
 * never as markup.
 */
export function looksLikeHtml(body: string): boolean {
  return /^\s*<(p|div|h[1-6]|ul|ol|figure|blockquote|section|article|br|hr|img|table|pre)[\s>/]/i.test(body);
}

/** Markdown as safe HTML (raw HTML in the source comes out as text). */
export function renderMarkdown(source: string): string {
  return md.render(source);
}

const ENTITIES: Record<string, string> = { '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#39;': "'", '&amp;': '&' };

/** The text a reader sees of a Markdown body (no markup, whitespace folded): for previews and summaries. */
export function markdownText(source: string): string {
  return renderMarkdown(source)
    .replace(/<[^>]*>/g, ' ')
    .replace(/&(lt|gt|quot|#39|amp);/g, (e) => ENTITIES[e]!)
    .replace(/\s+/g, ' ')
    .trim();
}
