import type { FastifyInstance, FastifyReply } from 'fastify';
import { sql, type Kysely } from 'kysely';
import { bodyHtml, bodyPreview, bodyText, pageBodySource } from '../../models/content-body.js';
import type { Row } from '../../models/define.js';
import { publicationState } from '../../models/editorial.js';
import { TierGate, entityGate } from '../../models/gate.js';
import { Page } from '../../models/page.js';
import { Post } from '../../models/post.js';
import { earlyAccessOver, type TierAccessResult } from '../../tiers/gating.js';
import type { Services } from '../../services.js';
import { sendViewerPage, type Viewer } from '../forms.js';
import { html, raw, type SafeHtml } from '../html.js';
import { pageViewer } from '../viewer.js';

/** Posts per home page. */
export const HOME_PAGE_SIZE = 10;
/** Characters of a post's text shown on the home page when it has no excerpt. */
const SUMMARY_LENGTH = 240;

/** The site's reading styles (only the pages that show posts and pages need them). */
const CONTENT_STYLE = raw(`<style>
.posts{list-style:none;padding:0;margin:0}.posts>li{display:flex;flex-direction:column;gap:.35rem}
.posts h2{margin:0;font-size:1.3rem;line-height:1.3;overflow-wrap:anywhere}.posts h2 a{color:#1b1f24;text-decoration:none}.posts h2 a:hover{text-decoration:underline}
.meta{color:#59636e;font-size:.9rem;display:flex;flex-wrap:wrap;gap:.5rem;align-items:center}
.badge{display:inline-block;font-size:.8rem;font-weight:600;border-radius:999px;padding:.05rem .6rem;background:#fff4e5;border:1px solid #f0b46c;color:#7a4a00}
.badge.open{background:#eaf6ec;border-color:#9fd2a8;color:#1e5b2a}.badge.state{background:#eef1f5;border-color:#c9d0d9;color:#38414b}
img.feature{display:block;width:100%;height:auto;max-height:24rem;object-fit:cover;border-radius:6px;margin:0 0 .75rem}
.posts img.feature{max-height:14rem;margin:0}
.excerpt{margin:0;color:#38414b;overflow-wrap:anywhere}
article.content{overflow-wrap:anywhere}article.content img{max-width:100%;height:auto}article.content pre{overflow-x:auto;background:#f1f3f6;padding:.75rem;border-radius:6px}
article.content blockquote{margin:0 0 1rem;padding-left:1rem;border-left:3px solid #c9d0d9;color:#38414b}article.content table{display:block;overflow-x:auto}
div.byline{margin:-.25rem 0 .75rem}nav.pager{display:flex;justify-content:space-between;gap:1rem;margin-top:1rem}
</style>`);

const posts = (db: Kysely<any>) => db.selectFrom('pst_posts');

const DATE = new Intl.DateTimeFormat('en-GB', { timeZone: 'UTC', day: 'numeric', month: 'short', year: 'numeric' });
const DATE_TIME = new Intl.DateTimeFormat('en-GB', { timeZone: 'UTC', day: 'numeric', month: 'short', year: 'numeric', hour: '2-digit', minute: '2-digit' });

function dateTag(d: Date | null, withTime = false): SafeHtml | '' {
  return d ? html`<time datetime="${d.toISOString()}">${(withTime ? DATE_TIME : DATE).format(d)}${withTime ? ' UTC' : ''}</time>` : '';
}

/** The tier a gated item is for, while its gate holds (early access over: no badge). */
function gateBadge(row: Row, model: typeof Post | typeof Page, access: TierAccessResult, now: Date): SafeHtml | '' {
  const gate = entityGate(model, row);
  if (gate.minLevel === null || earlyAccessOver(gate, now)) return '';
  const name = access.required_tier?.display_name ?? 'members';
  return html`<span class="badge${access.allowed ? ' open' : ''}" data-gate="${gate.minLevel}">for ${name}</span>`;
}

function featureImage(url: unknown, alt: string): SafeHtml | '' {
  return typeof url === 'string' && url !== '' ? html`<img class="feature" src="${url}" alt="${alt}" loading="lazy">` : '';
}

/** The gate prompt: sign in for anonymous readers, else where the prompt destination says (SPEC: settings related to tiers). */
export function gatePrompt(access: TierAccessResult, path: string, noun: 'post' | 'page'): SafeHtml {
  if (access.reason === 'not_logged_in') {
    return html`<div class="card notice" id="gate-prompt"><p>This ${noun} is for members${access.required_tier ? html` of the <strong>${access.required_tier.display_name}</strong> tier or higher` : ''}.</p>
<p><a href="/login?next=${encodeURIComponent(path)}">Sign in</a> or <a href="/register">sign up</a> to read on.</p></div>`;
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

/** What staff see above a draft or scheduled item they preview (readers never reach it). */
function stateNotice(state: 'draft' | 'scheduled' | 'published', time: Date | null, editUrl: string, noun: string): SafeHtml | '' {
  if (state === 'published') return html`<p class="help" id="staff-tools"><a href="${editUrl}">Edit this ${noun}</a></p>`;
  return html`<p class="notice warning" id="preview-notice">Preview: this ${noun} is ${state === 'draft' ? 'a draft' : html`scheduled for ${dateTag(time, true)}`}; only staff can see it. <a href="${editUrl}">Edit</a></p>`;
}

/** The home page, the post pages (/post/{id} and /p/{slug}) and the page route (/page/{slug}). */
export function sitePages(web: FastifyInstance, services: Services): void {
  const { settings, clock } = services;
  const db = services.db as unknown as Kysely<any>;

  const gateOf = (viewer: Viewer) =>
    new TierGate(services.db, settings, clock, { userId: viewer.user?.usr_user_id ?? null, permission: viewer.user?.usr_permission ?? 0 }, services.modelCaches);

  const send = (reply: FastifyReply, viewer: Viewer, title: string, body: SafeHtml, status = 200) =>
    sendViewerPage(reply, viewer, title, html`${CONTENT_STYLE}${body}`, status, { httpsImages: true });

  const notFound = (reply: FastifyReply, viewer: Viewer, noun: string) => sendViewerPage(reply, viewer, 'Not found', html`<div class="card"><p>There is no such ${noun}.</p></div>`, 404);

  web.get('/', async (request, reply) => {
    const viewer = await pageViewer(request, services);
    const now = clock.now();
    const gate = gateOf(viewer);
    const requested = Number((request.query as Record<string, unknown>).page ?? 1);
    const pageNo = Number.isInteger(requested) && requested >= 1 && requested <= 100_000 ? requested : 1;

    let listed = posts(db)
      .where('pst_delete_time', 'is', null)
      .where('pst_is_published', '=', true)
      .where((eb: any) => eb.or([eb('pst_published_time', 'is', null), eb('pst_published_time', '<=', now)]))
      .where((eb: any) => eb.or([eb('pst_is_on_homepage', 'is', null), eb('pst_is_on_homepage', '=', true)]));
    // tier_gate_hide_from_listings: gated posts the viewer cannot open are not listed (staff open all).
    if (settings.bool('tier_gate_hide_from_listings')) {
      const open = await gate.openRowsCondition(Post);
      if (open) listed = listed.where(open);
    }
    const counted = (await listed.select(sql<string>`count(*)`.as('total')).executeTakeFirst()) as { total: string } | undefined;
    const rows = (await listed
      .selectAll()
      .orderBy(sql`coalesce(pst_published_time, pst_create_time)`, 'desc')
      .orderBy('pst_post_id', 'desc')
      .limit(HOME_PAGE_SIZE)
      .offset((pageNo - 1) * HOME_PAGE_SIZE)
      .execute()) as Row[];
    const count = Number(counted?.total ?? 0);
    const previewLength = settings.int('tier_gate_preview_length');

    const items: SafeHtml[] = [];
    for (const row of rows) {
      const access = await gate.check(Post, row);
      const title = String(row.pst_title ?? '') || 'Untitled';
      const href = typeof row.pst_link === 'string' && row.pst_link !== '' ? `/p/${encodeURIComponent(row.pst_link)}` : `/post/${String(row.pst_post_id)}`;
      const excerpt =
        typeof row.pst_short_description === 'string' && row.pst_short_description.trim() !== ''
          ? row.pst_short_description
          : access.allowed
            ? truncate(bodyText(row.pst_body), SUMMARY_LENGTH)
            : bodyPreview(row.pst_body, Math.min(previewLength, SUMMARY_LENGTH));
      const published = (row.pst_published_time as Date | null) ?? (row.pst_create_time as Date | null);
      items.push(html`<li class="card" data-post="${String(row.pst_post_id)}">
  ${featureImage(row.pst_feature_image, '')}
  <h2><a href="${href}">${title}</a></h2>
  <div class="meta">${dateTag(published)}${gateBadge(row, Post, access, now)}</div>
  ${excerpt ? html`<p class="excerpt">${excerpt}</p>` : ''}
</li>`);
    }

    const lastPage = Math.max(1, Math.ceil(count / HOME_PAGE_SIZE));
    const pager =
      lastPage > 1
        ? html`<nav class="pager" aria-label="More posts">${pageNo > 1 ? html`<a href="${pageNo === 2 ? '/' : `/?page=${pageNo - 1}`}" rel="prev" id="newer-posts">← Newer posts</a>` : html`<span></span>`}${pageNo < lastPage ? html`<a href="/?page=${pageNo + 1}" rel="next" id="older-posts">Older posts →</a>` : ''}</nav>`
        : '';
    const welcome = viewer.user
      ? html`<div class="card" id="welcome"><p>Signed in as <strong>${viewer.displayName}</strong> (${viewer.user.usr_email}).</p>
          ${viewer.session?.loginAsBy ? html`<p class="notice">You are signed in as this member on behalf of a staff account.</p>` : ''}
          <p><a href="/profile">Your profile</a> · <a href="/profile/subscription">Your subscription</a> · <a href="/profile/app-sessions">App sessions</a> · <a href="/profile/security">Password and passkeys</a>${viewer.isStaff ? html` · <a href="/admin/posts">Posts</a>` : ''}</p></div>`
      : html`<div class="card" id="welcome"><p>Welcome. <a href="/login">Sign in</a> or <a href="/register">register</a>.</p></div>`;
    const list =
      items.length > 0
        ? html`<ul class="posts" id="posts">${items}</ul>`
        : html`<div class="card" id="no-posts"><p>${pageNo > 1 ? 'No more posts.' : 'No posts yet.'}${viewer.isStaff ? html` <a href="/admin/posts/new">Write a post</a>.` : ''}</p></div>`;
    return send(reply, viewer, settings.string('site_name') || 'Home', html`${welcome}${list}${pager}`);
  });

  /** A post's page for whoever asks: soft delete, then published state, then (last) the tier gate. */
  async function showPost(reply: FastifyReply, viewer: Viewer, row: Row | undefined, path: string) {
    const now = clock.now();
    const state = row ? publicationState({ published: row.pst_is_published === true, time: (row.pst_published_time as Date | null) ?? null }, now) : 'draft';
    if (!row || (state !== 'published' && !viewer.isStaff)) return notFound(reply, viewer, 'post');
    const gate = gateOf(viewer);
    const access = await gate.check(Post, row);
    const title = String(row.pst_title ?? '') || 'Untitled';
    const published = (row.pst_published_time as Date | null) ?? (row.pst_create_time as Date | null);
    const head = html`${viewer.isStaff ? stateNotice(state, (row.pst_published_time as Date | null) ?? null, `/admin/posts/${String(row.pst_post_id)}`, 'post') : ''}
<div class="meta byline" id="post-meta">${dateTag(published)}${gateBadge(row, Post, access, now)}</div>`;
    const image = featureImage(row.pst_feature_image, '');
    if (access.allowed) {
      return send(reply, viewer, title, html`${head}<article class="card content" id="post-body">${image}${raw(bodyHtml(row.pst_body))}</article>`);
    }
    const preview = bodyPreview(row.pst_body, settings.int('tier_gate_preview_length'));
    return send(
      reply,
      viewer,
      title,
      html`${head}${image || preview ? html`<article class="card content" id="post-preview">${image}${preview ? html`<p>${preview}…</p>` : ''}</article>` : ''}${gatePrompt(access, path, 'post')}`,
    );
  }

  web.get('/post/:id', async (request, reply) => {
    const viewer = await pageViewer(request, services);
    const raw = (request.params as { id: string }).id;
    const id = /^\d{1,15}$/.test(raw) ? Number(raw) : 0;
    const row = id > 0 ? ((await posts(db).selectAll().where('pst_post_id', '=', id).where('pst_delete_time', 'is', null).executeTakeFirst()) as Row | undefined) : undefined;
    return showPost(reply, viewer, row, `/post/${id}`);
  });

  web.get('/p/:slug', async (request, reply) => {
    const viewer = await pageViewer(request, services);
    const slug = (request.params as { slug: string }).slug;
    // Link names are unique among live posts when written here; older duplicates resolve to the newest
    // one the reader may see.
    const rows = (await posts(db).selectAll().where('pst_link', '=', slug).where('pst_delete_time', 'is', null).orderBy('pst_post_id', 'desc').limit(20).execute()) as Row[];
    const now = clock.now();
    const visible = rows.find((r) => publicationState({ published: r.pst_is_published === true, time: (r.pst_published_time as Date | null) ?? null }, now) === 'published');
    return showPost(reply, viewer, visible ?? (viewer.isStaff ? rows[0] : undefined), `/p/${slug}`);
  });

  web.get('/page/:slug', async (request, reply) => {
    const viewer = await pageViewer(request, services);
    const slug = (request.params as { slug: string }).slug;
    const now = clock.now();
    const rows = (await db.selectFrom('pag_pages').selectAll().where('pag_link', '=', slug).where('pag_delete_time', 'is', null).orderBy('pag_page_id', 'desc').limit(20).execute()) as Row[];
    const stateOf = (r: Row) => publicationState({ published: r.pag_published_time !== null, time: (r.pag_published_time as Date | null) ?? null }, now);
    const row = rows.find((r) => stateOf(r) === 'published') ?? (viewer.isStaff ? rows[0] : undefined);
    if (!row) return notFound(reply, viewer, 'page');
    const gate = gateOf(viewer);
    const access = await gate.check(Page, row);
    const title = String(row.pag_title ?? '') || 'Untitled';
    const body = pageBodySource(row.pag_component_layout);
    const head = html`${viewer.isStaff ? stateNotice(stateOf(row), (row.pag_published_time as Date | null) ?? null, `/admin/pages/${String(row.pag_page_id)}`, 'page') : ''}${
      gateBadge(row, Page, access, now) ? html`<div class="meta byline" id="page-meta">${gateBadge(row, Page, access, now)}</div>` : ''
    }`;
    const image = featureImage(row.pag_feature_image, '');
    if (access.allowed) return send(reply, viewer, title, html`${head}<article class="card content" id="page-body">${image}${raw(bodyHtml(body))}</article>`);
    const preview = bodyPreview(body, settings.int('tier_gate_preview_length'));
    return send(
      reply,
      viewer,
      title,
      html`${head}${image || preview ? html`<article class="card content" id="page-preview">${image}${preview ? html`<p>${preview}…</p>` : ''}</article>` : ''}${gatePrompt(access, `/page/${slug}`, 'page')}`,
    );
  });
}

function truncate(text: string, length: number): string {
  const chars = [...text];
  return chars.length <= length ? text : `${chars.slice(0, length).join('').trimEnd()}…`;
}
