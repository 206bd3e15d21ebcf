import type { FastifyInstance } from 'fastify';
import { Post } from '../../models/post.js';
import type { Row } from '../../models/define.js';
import type { Services } from '../../services.js';
import { TierGate, entityGate } from '../../models/gate.js';
import { plainText, type TierAccessResult } from '../../tiers/gating.js';
import { sendViewerPage } from '../forms.js';
import { html, type SafeHtml } from '../html.js';
import { pageViewer } from '../viewer.js';

const RSS_ITEMS = 50;

/**
 * Text as XML character data: the five special characters escaped, and characters XML 1.0 forbids
 * (control characters, lone surrogates, U+FFFE/U+FFFF) dropped, so a stray one cannot break the feed.
 */
function xml(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[^\t\n\r\x20-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu, '').replace(/[<>&'"]/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', "'": '&apos;', '"': '&quot;' })[c]!);
}

/** The body as paragraphs of plain text: stored bodies are staff-written HTML, shown here without markup. */
function paragraphs(body: unknown): SafeHtml {
  if (typeof body !== 'string' || body.trim() === '') return html``;
  const parts = body.split(/<\/p>|<br\s*\/?>|\n{2,}/i).map(plainText).filter(Boolean);
  return html`${parts.map((p) => html`<p>${p}</p>`)}`;
}

function prompt(access: TierAccessResult, postId: number): SafeHtml {
  if (access.reason === 'not_logged_in') {
    return html`<div class="card notice" id="gate-prompt"><p>This post is for members${access.required_tier ? html` of the <strong>${access.required_tier.display_name}</strong> tier or higher` : ''}.</p>
<p><a href="/login?next=${encodeURIComponent(`/post/${postId}`)}">Sign in</a> or <a href="/register">sign up</a> to read on.</p></div>`;
  }
  const p = access.prompt;
  const need = access.required_tier ? html`<p>Reading on needs the <strong>${access.required_tier.display_name}</strong> tier or higher.</p>` : html`<p>Reading on needs a higher tier.</p>`;
  if (p?.kind === 'url') return html`<div class="card notice" id="gate-prompt">${need}<p><a href="${p.url}">Upgrade your membership</a></p></div>`;
  if (p?.kind === 'products') {
    // The member's subscription page is where a plan is chosen (into the cart) or a subscription upgraded.
    return html`<div class="card notice" id="gate-prompt">${need}<ul>${access.upgrade_options.map((o) => html`<li><strong>${o.tier.display_name}</strong>: <a href="/profile/subscription#change-tier" data-product="${o.product_id}">${o.name}</a></li>`)}</ul></div>`;
  }
  return html`<div class="card notice" id="gate-prompt">${need}<p>${p?.kind === 'contact' ? p.message : ''}</p></div>`;
}

/** A post page (preview and gate prompt when the access check denies) and the site's RSS feed. */
export function contentPages(web: FastifyInstance, services: Services): void {
  const { db, settings, clock, config } = services;
  const posts = () => (db as unknown as import('kysely').Kysely<any>).selectFrom('pst_posts');

  web.get('/post/:id', async (request, reply) => {
    const viewer = await pageViewer(request, services);
    const id = Number((request.params as { id: string }).id);
    const isStaff = viewer.isStaff;
    const row = Number.isInteger(id) && id > 0 ? ((await posts().selectAll().where('pst_post_id', '=', id).where('pst_delete_time', 'is', null).executeTakeFirst()) as Row | undefined) : undefined;
    // Soft delete, then published state, then (last) the tier gate.
    const published = row && row.pst_is_published === true && (!(row.pst_published_time instanceof Date) || row.pst_published_time <= clock.now());
    if (!row || (!published && !isStaff)) {
      return sendViewerPage(reply, viewer, 'Not found', html`<div class="card"><p>There is no such post.</p></div>`, 404);
    }
    const gate = new TierGate(db, settings, clock, { userId: viewer.user?.usr_user_id ?? null, permission: viewer.user?.usr_permission ?? 0 }, services.modelCaches);
    const access = await gate.check(Post, row);
    const title = String(row.pst_title ?? 'Untitled');
    if (access.allowed) {
      return sendViewerPage(reply, viewer, title, html`<article class="card" id="post-body">${paragraphs(row.pst_body)}</article>`);
    }
    const preview = gate.redact(Post, row).pst_body;
    return sendViewerPage(
      reply,
      viewer,
      title,
      html`${preview ? html`<article class="card" id="post-preview"><p>${preview}…</p></article>` : ''}${prompt(access, id)}`,
    );
  });

  // RSS 2.0 of published posts. Gated posts are always left out, whoever asks (DESIGN 7).
  web.get('/rss', async (_request, reply) => {
    const now = clock.now();
    const anonymous = new TierGate(db, settings, clock, { userId: null, permission: 0 }, services.modelCaches);
    // Gated posts are left out in SQL, so the feed is full however many recent posts are gated.
    const openToAnyone = (await anonymous.openRowsCondition(Post))!;
    const rows = (await posts()
      .selectAll()
      .where('pst_delete_time', 'is', null)
      .where('pst_is_published', '=', true)
      .where((eb: any) => eb.or([eb('pst_published_time', 'is', null), eb('pst_published_time', '<=', now)]))
      .where(openToAnyone)
      .orderBy('pst_published_time', 'desc')
      .orderBy('pst_post_id', 'desc')
      .limit(RSS_ITEMS)
      .execute()) as Row[];
    // The one access check still has the last word on every item.
    const open: Row[] = [];
    for (const row of rows) if ((await anonymous.checkGate(entityGate(Post, row))).allowed) open.push(row);
    const site = settings.string('site_name');
    const items = open
      .map((row) => {
        const link = `${config.baseUrl}/post/${row.pst_post_id}`;
        const date = (row.pst_published_time instanceof Date ? row.pst_published_time : (row.pst_create_time as Date)).toUTCString();
        const summary = typeof row.pst_short_description === 'string' && row.pst_short_description !== '' ? row.pst_short_description : plainText(String(row.pst_body ?? '')).slice(0, 300);
        return `    <item>
      <title>${xml(String(row.pst_title ?? 'Untitled'))}</title>
      <link>${xml(link)}</link>
      <guid isPermaLink="true">${xml(link)}</guid>
      <pubDate>${date}</pubDate>
      <description>${xml(summary)}</description>
    </item>`;
      })
      .join('\n');
    const body = `<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0">
  <channel>
    <title>${xml(site)}</title>
    <link>${xml(config.baseUrl)}/</link>
    <description>${xml(`Posts from ${site}`)}</description>
${items}
  </channel>
</rss>
`;
    return reply.type('application/rss+xml; charset=utf-8').header('cache-control', 'no-store').send(body);
  });
}
