import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.js';
import type { Clock } from '../../lib/clock.js';
import { bodyHtml } from '../../models/content-body.js';
import type { GhostExport, GhostPost, GhostProduct } from './format.js';
import { ghostDb, type GhostImportKind } from './tables.js';

/** The Ghost version whose export shape this writes (meta.version). */
export const GHOST_EXPORT_VERSION = '6.0.0';

/** A stable 24-hex id (Ghost's ObjectId width) for a row that did not come from Ghost. */
function objectId(kind: string, localId: number | string): string {
  return createHash('sha256').update(`gatehouse:${kind}:${localId}`).digest('hex').slice(0, 24);
}

function uuidOf(id: string): string {
  const h = createHash('sha256').update(`gatehouse:uuid:${id}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

const iso = (d: Date | string | null | undefined) => (d === null || d === undefined ? null : new Date(d).toISOString());
const escapeHtml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const paragraphs = (text: string) =>
  text
    .split(/\n{2,}/)
    .filter((p) => p.trim() !== '')
    .map((p) => `<p>${escapeHtml(p.trim())}</p>`)
    .join('');
const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

interface Source {
  html?: string | null;
  body_sha256?: string;
  feature_image?: string | null;
  custom_excerpt?: string | null;
  featured?: boolean;
  status?: string;
  tags?: { name: string; slug: string }[];
  created_at?: string | null;
  monthly_price?: number | null;
  yearly_price?: number | null;
  currency?: string | null;
  type?: string;
}

function asSource(v: unknown): Source {
  const o = typeof v === 'string' ? JSON.parse(v) : v;
  return o && typeof o === 'object' ? (o as Source) : {};
}

/**
 * Posts, pages and tiers as a Ghost export (`db[0].data`: posts, products, posts_products, tags,
 * posts_tags, users, posts_authors), so the way out reads like the way in: a Ghost site, or another
 * Gatehouse, imports it. Rows that came from Ghost keep their Ghost ids and the fields no column holds.
 */
export async function exportGhostContent(dbIn: Kysely<DB>, clock: Clock): Promise<{ export: GhostExport; notes: string[] }> {
  const db = ghostDb(dbIn);
  const notes: string[] = [];
  const maps = await db.selectFrom('gim_ghost_imports').select(['gim_kind', 'gim_ghost_id', 'gim_local_id', 'gim_source']).execute();
  const mapOf = (kind: GhostImportKind) => new Map(maps.filter((m) => m.gim_kind === kind).map((m) => [Number(m.gim_local_id), { id: m.gim_ghost_id, source: asSource(m.gim_source) }]));
  const [tierMap, postMap, pageMap] = [mapOf('tier'), mapOf('post'), mapOf('page')];
  const now = clock.now();

  const tiers = await db.selectFrom('sbt_subscription_tiers').selectAll().where('sbt_delete_time', 'is', null).orderBy('sbt_tier_level').orderBy('sbt_name').execute();
  const products: GhostProduct[] = tiers.map((t) => {
    const m = tierMap.get(t.sbt_subscription_tier_id);
    const free = m ? m.source.type === 'free' : t.sbt_name === 'free';
    return {
      id: m?.id ?? objectId('tier', t.sbt_subscription_tier_id),
      name: t.sbt_display_name,
      slug: t.sbt_name,
      active: t.sbt_is_active,
      welcome_page_url: null,
      visibility: 'public',
      trial_days: 0,
      description: t.sbt_description,
      type: free ? 'free' : 'paid',
      currency: free ? null : (m?.source.currency ?? null),
      monthly_price: free ? null : (m?.source.monthly_price ?? null),
      yearly_price: free ? null : (m?.source.yearly_price ?? null),
      created_at: iso(t.sbt_create_time) as string,
      updated_at: iso(t.sbt_update_time),
    };
  });
  const levels = new Map(products.map((p, i) => [p.id, tiers[i]?.sbt_tier_level ?? 0]));
  const freeProduct = products.find((p) => p.type === 'free');
  // Ghost always has its free tier; a site without one here exports it, and an import makes it only if needed.
  if (!freeProduct) products.unshift({ id: objectId('tier', 'free'), name: 'Free', slug: 'free', active: true, welcome_page_url: null, visibility: 'public', trial_days: 0, description: null, type: 'free', currency: null, monthly_price: null, yearly_price: null, created_at: now.toISOString(), updated_at: null });
  const paid = products.filter((p) => p.type === 'paid');

  const postsProducts: { id: string; post_id: string; product_id: string; sort_order: number }[] = [];
  function visibility(postId: string, slug: string, level: number | null): string {
    if (level === null || level <= 0) return 'public';
    if (freeProduct && levels.get(freeProduct.id) === level) return 'members';
    const from = products.filter((p) => (levels.get(p.id) ?? -Infinity) >= level);
    if (from.length === 0) {
      notes.push(`'${slug}' is gated at level ${level}, above every tier: exported as paid-members only.`);
      return 'paid';
    }
    if (from.length === paid.length && from.every((p) => p.type === 'paid')) return 'paid';
    from.forEach((p, i) => postsProducts.push({ id: objectId('posts_products', `${postId}:${p.id}`), post_id: postId, product_id: p.id, sort_order: i }));
    return 'tiers';
  }

  const users = await db.selectFrom('usr_users').select(['usr_user_id', 'usr_first_name', 'usr_last_name', 'usr_email']).where('usr_permission', '>=', 5).execute();
  const userById = new Map(users.map((u) => [u.usr_user_id, u]));
  const authorsUsed = new Set<number>();
  const postsAuthors: { id: string; post_id: string; author_id: string; sort_order: number }[] = [];
  const tags = new Map<string, { id: string; name: string; slug: string }>();
  const postsTags: { id: string; post_id: string; tag_id: string; sort_order: number }[] = [];

  const posts: GhostPost[] = [];
  function add(kind: 'post' | 'page', localId: number, row: { title: string | null; slug: string | null; body: string; published: boolean; time: Date | null; level: number | null; excerpt: string | null; created: Date; author: number | null; html: string | null; image: string | null }, m: { id: string; source: Source } | undefined) {
    const id = m?.id ?? objectId(kind, localId);
    const src = m?.source ?? {};
    const status = !row.published || row.time === null ? (kind === 'post' && row.published ? 'published' : src.status === 'sent' ? 'sent' : 'draft') : row.time.getTime() > now.getTime() ? 'scheduled' : 'published';
    // A body written here is Markdown (models/content-body.ts): Ghost gets it rendered.
    const html = row.html ?? (src.html && src.body_sha256 === sha256(row.body) ? src.html : m ? paragraphs(row.body) : bodyHtml(row.body));
    const excerpt = src.custom_excerpt && row.excerpt !== null && src.custom_excerpt.slice(0, row.excerpt.length) === row.excerpt ? src.custom_excerpt : row.excerpt;
    posts.push({
      id,
      uuid: uuidOf(id),
      title: row.title ?? '',
      slug: row.slug ?? id,
      mobiledoc: null,
      lexical: null,
      html,
      comment_id: id,
      plaintext: row.body,
      feature_image: row.image ?? src.feature_image ?? null,
      featured: src.featured ?? false,
      type: kind,
      status,
      locale: null,
      visibility: visibility(id, row.slug ?? id, row.level),
      email_recipient_filter: 'all',
      created_at: iso(src.created_at ?? row.created) as string,
      updated_at: iso(row.created),
      published_at: iso(row.time),
      published_by: null,
      custom_excerpt: excerpt,
      codeinjection_head: null,
      codeinjection_foot: null,
      custom_template: null,
      canonical_url: null,
      newsletter_id: null,
      show_title_and_feature_image: true,
    });
    if (row.author !== null && userById.has(row.author)) {
      authorsUsed.add(row.author);
      postsAuthors.push({ id: objectId('posts_authors', id), post_id: id, author_id: objectId('user', row.author), sort_order: 0 });
    }
    (src.tags ?? []).forEach((t, i) => {
      const tag = tags.get(t.slug) ?? { id: objectId('tag', t.slug), name: t.name, slug: t.slug };
      tags.set(t.slug, tag);
      postsTags.push({ id: objectId('posts_tags', `${id}:${tag.id}`), post_id: id, tag_id: tag.id, sort_order: i });
    });
  }

  const postRows = await db.selectFrom('pst_posts').selectAll().where('pst_delete_time', 'is', null).orderBy('pst_post_id').execute();
  for (const p of postRows) {
    add('post', p.pst_post_id, { title: p.pst_title, slug: p.pst_link, body: p.pst_body ?? '', published: p.pst_is_published === true, time: p.pst_published_time ? new Date(p.pst_published_time) : null, level: p.pst_tier_min_level, excerpt: p.pst_short_description, created: new Date(p.pst_create_time), author: p.pst_usr_user_id, html: null, image: p.pst_feature_image }, postMap.get(p.pst_post_id));
  }
  const pageRows = await db.selectFrom('pag_pages').selectAll().where('pag_delete_time', 'is', null).orderBy('pag_page_id').execute();
  for (const p of pageRows) {
    const layout = (typeof p.pag_component_layout === 'string' ? JSON.parse(p.pag_component_layout) : p.pag_component_layout) as { html?: unknown; plaintext?: unknown; markdown?: unknown } | null;
    // The page editor's layout is { markdown }: Ghost gets its text and its rendering.
    const markdown = typeof layout?.markdown === 'string' ? layout.markdown : null;
    const html = typeof layout?.html === 'string' ? layout.html : markdown !== null ? bodyHtml(markdown) : null;
    const body = markdown ?? (typeof layout?.plaintext === 'string' ? layout.plaintext : html ? html.replace(/<[^>]*>/g, ' ').replace(/\s+/g, ' ').trim() : '');
    const m = pageMap.get(p.pag_page_id);
    add('page', p.pag_page_id, { title: p.pag_title, slug: p.pag_link, body, published: p.pag_published_time !== null, time: p.pag_published_time ? new Date(p.pag_published_time) : null, level: p.pag_tier_min_level, excerpt: m?.source.custom_excerpt ?? null, created: new Date(p.pag_create_time), author: p.pag_usr_user_id, html: html ?? paragraphs(body), image: p.pag_feature_image }, m);
  }

  const exportedUsers = [...authorsUsed].map((id) => {
    const u = userById.get(id)!;
    const name = [u.usr_first_name, u.usr_last_name].filter((s) => s).join(' ') || u.usr_email;
    return { id: objectId('user', id), name, slug: `${(u.usr_email.split('@')[0] ?? '').toLowerCase().replace(/[^a-z0-9]+/g, '-')}-${id}`, email: u.usr_email, status: 'active', visibility: 'public', created_at: now.toISOString(), updated_at: null };
  });

  return {
    export: {
      db: [
        {
          meta: { exported_on: clock.nowMs(), version: GHOST_EXPORT_VERSION },
          data: { posts, posts_authors: postsAuthors, posts_meta: [], posts_products: postsProducts, posts_tags: postsTags, products, tags: [...tags.values()], users: exportedUsers },
        },
      ],
    },
    notes,
  };
}
