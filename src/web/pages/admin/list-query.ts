import { html, type SafeHtml } from '../../html.js';

/** Rows per page of the admin lists (members, orders). */
export const PAGE_SIZE = 25;
/** The highest page number accepted (far past any real list; keeps OFFSET a small integer). */
const MAX_PAGE = 100_000;

/** A list's query string as read: each known parameter's one value, and what was wrong with any. */
export interface ListQuery {
  values: Record<string, string>;
  errors: Record<string, string>;
  page: number;
}

/**
 * Reads a list page's query string: each of `names` as one trimmed string ('' when absent or empty), and
 * `page` as a positive integer (1 when absent). A parameter given twice, or a page that is not a number,
 * is an error for that field; unknown parameters are ignored.
 */
export function readListQuery(query: unknown, names: readonly string[]): ListQuery {
  const raw = (query ?? {}) as Record<string, unknown>;
  const values: Record<string, string> = {};
  const errors: Record<string, string> = {};
  for (const name of [...names, 'page']) {
    const v = raw[name];
    if (v === undefined) values[name] = '';
    else if (typeof v === 'string') values[name] = v.trim();
    else {
      values[name] = '';
      errors[name] = 'Give this only once.';
    }
  }
  let page = 1;
  if (values.page !== '' && !errors.page) {
    if (/^\d{1,6}$/.test(values.page!) && Number(values.page) >= 1 && Number(values.page) <= MAX_PAGE) page = Number(values.page);
    else errors.page = `The page is a whole number from 1 to ${MAX_PAGE}.`;
  }
  return { values, errors, page };
}

/** The list's URL with these filter values (empty ones left out) and page (left out when 1). */
export function listHref(base: string, values: Record<string, string>, page = 1): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(values)) if (k !== 'page' && v !== '') params.set(k, v);
  if (page > 1) params.set('page', String(page));
  const qs = params.toString();
  return qs ? `${base}?${qs}` : base;
}

/** "Rows 26–50 of 120" with previous and next links that keep the filters. */
export function pager(base: string, values: Record<string, string>, page: number, total: number, noun: string): SafeHtml {
  const pages = Math.max(1, Math.ceil(total / PAGE_SIZE));
  const first = total === 0 ? 0 : (page - 1) * PAGE_SIZE + 1;
  const last = Math.min(total, page * PAGE_SIZE);
  return html`<nav class="pager" aria-label="Pages" style="display:flex;flex-wrap:wrap;gap:1rem;align-items:center;margin-top:.75rem">
<span id="range">${page > pages ? `Page ${page} is past the last page (${pages}) of ${total} ${noun.toLowerCase()}` : first > 0 ? `${noun} ${first}–${last} of ${total} · page ${page} of ${pages}` : `No ${noun.toLowerCase()}`}</span>
${page > 1 ? html`<a id="prev-page" rel="prev" href="${listHref(base, values, Math.min(page - 1, pages))}">← Previous</a>` : ''}
${page < pages ? html`<a id="next-page" rel="next" href="${listHref(base, values, page + 1)}">Next →</a>` : ''}
</nav>`;
}

/** A <select> whose options are [value, label] pairs, with the current value selected. */
export function selectInput(id: string, options: ReadonlyArray<readonly [string, string]>, current: string): SafeHtml {
  return html`<select id="${id}" name="${id}">${options.map(([v, label]) => html`<option value="${v}"${v === current ? html` selected` : ''}>${label}</option>`)}</select>`;
}
