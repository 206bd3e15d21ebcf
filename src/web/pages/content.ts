import type { FastifyInstance } from 'fastify';
import { Post } from '../../models/post.js';
import type { Row } from '../../models/define.js';
import type { Services } from '../../services.js';
import { bodyText } from '../../models/content-body.js';
import { TierGate, entityGate } from '../../models/gate.js';

const RSS_ITEMS = 50;

/**
 * Text as XML character data: the five special characters escaped, and characters XML 1.0 forbids
 * (control characters, lone surrogates, U+FFFE/U+FFFF) dropped, so a stray one cannot break the feed.
 */
function xml(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[^\t\n\r\x20-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu, '').replace(/[<>&'"]/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', "'": '&apos;', '"': '&quot;' })[c]!);
}

/** The site's RSS feed (the post pages are in site.ts). */
export function contentPages(web: FastifyInstance, services: Services): void {
  const { db, settings, clock, config } = services;
  const posts = () => (db as unknown as import('kysely').Kysely<any>).selectFrom('pst_posts');

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
        const summary = typeof row.pst_short_description === 'string' && row.pst_short_description !== '' ? row.pst_short_description : bodyText(row.pst_body).slice(0, 300);
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
