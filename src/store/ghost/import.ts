import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.js';
import type { Clock } from '../../lib/clock.js';
import type { FeatureRegistry } from '../../tiers/feature-registry.js';
import { plainText } from '../../tiers/gating.js';
import { featureImageProblem } from '../../models/editorial.js';
import { createTier, findTierByName, updateTier, type TierChanges } from '../../tiers/tiers.js';
import type { GhostData, GhostPost, GhostProduct } from './format.js';
import { gateFor, type ImportedTier } from './gates.js';
import { ghostDb, type GhostDB, type GhostImportKind } from './tables.js';

const TIER_LEVEL_STEP = 10;
const FREE_TIER_LEVEL = 1;
const BATCH_SIZE = 100;
const STAFF_PERMISSION = 5;
const EXCERPT_MAX = 255;

export interface KindCounts {
  created: number;
  updated: number;
  unchanged: number;
  skipped: number;
}

export interface GhostImportReport {
  ghost_version: string;
  counts: Record<GhostImportKind, KindCounts>;
  /** Tier-specific posts whose tier set was not every tier from its lowest level up: gated at that level. */
  widened: { kind: 'post' | 'page'; ghost_id: string; slug: string; tiers: string[]; also_readable_by: string[]; level: number }[];
  not_imported: { kind: string; ghost_id: string | null; name: string; reason: string }[];
  notes: string[];
}

export interface GhostImportContext {
  db: Kysely<DB>;
  clock: Clock;
  registry: FeatureRegistry;
  /** The author of posts whose Ghost author has no local account (the admin importing); else the first staff user. */
  fallbackAuthorId?: number | null;
}

const emptyCounts = (): KindCounts => ({ created: 0, updated: 0, unchanged: 0, skipped: 0 });
const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

/** JSON with object keys sorted: jsonb gives keys back in its own order, so compare values this way. */
export function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}
const sameJson = (stored: unknown, text: string) => canonicalJson(typeof stored === 'string' ? JSON.parse(stored) : stored) === canonicalJson(JSON.parse(text));

function time(v: string | null | undefined): Date | null {
  if (v === null || v === undefined || v === '') return null;
  const d = new Date(v);
  return Number.isNaN(d.getTime()) ? null : d;
}

function sameTime(a: Date | string | null, b: Date | null): boolean {
  if (a === null || b === null) return a === b;
  return new Date(a).getTime() === b.getTime();
}

/** The free tier is made only when something needs it: members-only content, a tier set naming it, or free members. */
function needsFreeTier(data: GhostData, free: GhostProduct | undefined): boolean {
  return (
    data.posts.some((p) => p.visibility === 'members') ||
    (free !== undefined && data.posts_products.some((l) => l.product_id === free.id)) ||
    data.members.some((m) => m.status === 'free')
  );
}

/**
 * Imports a parsed Ghost export (DESIGN 16): tiers, then posts and pages with their gates, one transaction
 * for the tiers and one per batch of content. Idempotent by Ghost's id through gim_ghost_imports.
 */
export async function importGhostContent(ctx: GhostImportContext, meta: { version: string }, data: GhostData): Promise<GhostImportReport> {
  const report: GhostImportReport = {
    ghost_version: meta.version,
    counts: { tier: emptyCounts(), post: emptyCounts(), page: emptyCounts() },
    widened: [],
    not_imported: [],
    notes: [],
  };
  const tiers = await importTiers(ctx, data, report);
  await importContent(ctx, data, tiers, report);
  if (data.tags.length > 0) report.notes.push(`${data.tags.length} tags are kept with each post for the content export; Gatehouse has no tags.`);
  report.notes.push('Newsletters, members, comments and settings are not part of the content import; members come from Ghost\'s member CSV (gatehouse member import).');
  return report;
}

async function importTiers(ctx: GhostImportContext, data: GhostData, report: GhostImportReport): Promise<ImportedTier[]> {
  const free = data.products.find((p) => p.type === 'free');
  const paid = data.products
    .filter((p) => p.type !== 'free')
    .sort((a, b) => (a.monthly_price ?? Number.MAX_SAFE_INTEGER) - (b.monthly_price ?? Number.MAX_SAFE_INTEGER)); // stable: file order breaks ties
  const wanted: { product: GhostProduct; level: number; free: boolean }[] = paid.map((product, i) => ({ product, level: (i + 1) * TIER_LEVEL_STEP, free: false }));
  if (free && needsFreeTier(data, free)) wanted.unshift({ product: free, level: FREE_TIER_LEVEL, free: true });
  else if (free) report.not_imported.push({ kind: 'tier', ghost_id: free.id, name: free.slug, reason: 'the free tier is not needed: no members-only content and no free members' }), report.counts.tier.skipped++;
  else if (needsFreeTier(data, undefined)) wanted.unshift({ product: { id: 'free', name: 'Free', slug: 'free', active: true, type: 'free' }, level: FREE_TIER_LEVEL, free: true });

  const db = ghostDb(ctx.db);
  return db.transaction().execute(async (trx) => {
    const imported: ImportedTier[] = [];
    for (const { product, level, free: isFree } of wanted) {
      const name = product.slug.slice(0, 100);
      const changes: Required<Pick<TierChanges, 'sbt_name' | 'sbt_display_name' | 'sbt_tier_level' | 'sbt_description' | 'sbt_is_active'>> = {
        sbt_name: name,
        sbt_display_name: (product.name || product.slug).slice(0, 100),
        sbt_tier_level: level,
        sbt_description: product.description ?? null,
        sbt_is_active: product.active === true || product.active === 1,
      };
      const source = JSON.stringify({ monthly_price: product.monthly_price ?? null, yearly_price: product.yearly_price ?? null, currency: product.currency ?? null, type: product.type });
      const mapped = await mapping(trx, 'tier', product.id);
      const stored = mapped
        ? await trx.selectFrom('sbt_subscription_tiers').selectAll().where('sbt_subscription_tier_id', '=', mapped.gim_local_id).where('sbt_delete_time', 'is', null).executeTakeFirst()
        : await findTierByName(trx as unknown as Kysely<DB>, name);
      let localId: number;
      if (!stored) {
        localId = await createTier({ db: trx as unknown as Kysely<DB>, clock: ctx.clock, registry: ctx.registry, createdBy: null }, changes);
        report.counts.tier.created++;
      } else {
        localId = stored.sbt_subscription_tier_id;
        const differs = (Object.keys(changes) as (keyof typeof changes)[]).filter((k) => stored[k] !== changes[k]);
        if (differs.length > 0 || !mapped || !sameJson(mapped.gim_source, source)) {
          if (differs.length > 0) await updateTier(trx as unknown as Kysely<DB>, ctx.clock, ctx.registry, localId, Object.fromEntries(differs.map((k) => [k, changes[k]])));
          if (!mapped) report.notes.push(`Tier '${name}' already existed and now stands for Ghost's tier ${product.id}.`);
          report.counts.tier[differs.length > 0 ? 'updated' : 'unchanged']++;
        } else {
          report.counts.tier.unchanged++;
        }
      }
      await remember(trx, ctx.clock, 'tier', product.id, localId, source);
      imported.push({ ghostId: product.id, name, level, free: isFree });
    }
    return imported;
  });
}

async function mapping(db: Kysely<GhostDB>, kind: GhostImportKind, ghostId: string) {
  return db.selectFrom('gim_ghost_imports').select(['gim_local_id', 'gim_source']).where('gim_kind', '=', kind).where('gim_ghost_id', '=', ghostId).executeTakeFirst();
}

async function remember(db: Kysely<GhostDB>, clock: Clock, kind: GhostImportKind, ghostId: string, localId: number, source: string): Promise<void> {
  const now = clock.now();
  await db
    .insertInto('gim_ghost_imports')
    .values({ gim_kind: kind, gim_ghost_id: ghostId, gim_local_id: localId, gim_source: source, gim_create_time: now, gim_update_time: now })
    .onConflict((oc) =>
      oc.columns(['gim_kind', 'gim_ghost_id']).doUpdateSet((eb) => ({ gim_local_id: eb.ref('excluded.gim_local_id'), gim_source: eb.ref('excluded.gim_source'), gim_update_time: now })).where((eb) =>
        eb.or([eb('gim_ghost_imports.gim_local_id', '!=', eb.ref('excluded.gim_local_id')), eb('gim_ghost_imports.gim_source', '!=', eb.ref('excluded.gim_source'))]),
      ),
    )
    .execute();
}

/** The local author of each Ghost post: its first Ghost author's account by email, else the fallback. */
async function authorsByPost(db: Kysely<GhostDB>, data: GhostData): Promise<Map<string, { email: string | null; userId: number | null }>> {
  const users = new Map(data.users.map((u) => [u.id, u]));
  const first = new Map<string, string>();
  for (const link of [...data.posts_authors].sort((a, b) => (a.sort_order ?? 0) - (b.sort_order ?? 0))) if (!first.has(link.post_id)) first.set(link.post_id, link.author_id);
  const emails = [...new Set([...first.values()].map((id) => users.get(id)?.email?.toLowerCase()).filter((e): e is string => typeof e === 'string'))];
  const local = emails.length === 0 ? [] : await db.selectFrom('usr_users').select(['usr_user_id', 'usr_email']).where((eb) => eb.fn('lower', ['usr_email']), 'in', emails).where('usr_permission', '>=', STAFF_PERMISSION).where('usr_delete_time', 'is', null).execute();
  const byEmail = new Map(local.map((u) => [u.usr_email.toLowerCase(), u.usr_user_id]));
  const result = new Map<string, { email: string | null; userId: number | null }>();
  for (const [postId, authorId] of first) {
    const email = users.get(authorId)?.email?.toLowerCase() ?? null;
    result.set(postId, { email, userId: email ? (byEmail.get(email) ?? null) : null });
  }
  return result;
}

async function firstStaffUser(db: Kysely<GhostDB>): Promise<number | null> {
  const row = await db
    .selectFrom('usr_users')
    .select('usr_user_id')
    .where('usr_permission', '>=', STAFF_PERMISSION)
    .where('usr_delete_time', 'is', null)
    .orderBy('usr_permission', 'desc')
    .orderBy('usr_user_id')
    .executeTakeFirst();
  return row?.usr_user_id ?? null;
}

/** The Ghost fields no column holds, kept with the mapping for the content export. */
function sourceOf(post: GhostPost, body: string, tags: { name: string; slug: string }[], author: string | null, tierIds: string[]) {
  return {
    html: post.html ?? null,
    body_sha256: sha256(body),
    feature_image: post.feature_image ?? null,
    custom_excerpt: post.custom_excerpt ?? null,
    featured: post.featured === true || post.featured === 1,
    status: post.status,
    visibility: post.visibility,
    tiers: tierIds,
    tags,
    author_email: author,
    created_at: post.created_at ?? null,
  };
}

async function importContent(ctx: GhostImportContext, data: GhostData, tiers: ImportedTier[], report: GhostImportReport): Promise<void> {
  const db = ghostDb(ctx.db);
  const authors = await authorsByPost(db, data);
  const fallback = ctx.fallbackAuthorId ?? (await firstStaffUser(db));
  const tagById = new Map(data.tags.map((t) => [t.id, { name: t.name, slug: t.slug }]));
  const tagsOf = new Map<string, { name: string; slug: string }[]>();
  for (const l of [...data.posts_tags].sort((a, b) => (a.sort_order ?? 0) - (b.sort_order ?? 0))) {
    const tag = tagById.get(l.tag_id);
    if (tag) tagsOf.set(l.post_id, [...(tagsOf.get(l.post_id) ?? []), tag]);
  }
  const tiersOf = new Map<string, string[]>();
  for (const l of data.posts_products) tiersOf.set(l.post_id, [...(tiersOf.get(l.post_id) ?? []), l.product_id]);
  let missingAuthors = 0;

  for (let i = 0; i < data.posts.length; i += BATCH_SIZE) {
    const batch = data.posts.slice(i, i + BATCH_SIZE);
    await db.transaction().execute(async (trx) => {
      for (const post of batch) {
        const kind: 'post' | 'page' = post.type === 'page' ? 'page' : 'post';
        const label = typeof post.slug === 'string' ? post.slug : String(post.title ?? '');
        if (typeof post.id !== 'string' || post.id === '' || (post.type !== 'post' && post.type !== 'page')) {
          report.not_imported.push({ kind: 'post', ghost_id: typeof post.id === 'string' ? post.id : null, name: label, reason: `not a post or page (type '${String(post.type)}')` });
          report.counts.post.skipped++;
          continue;
        }
        const named = tiersOf.get(post.id) ?? [];
        const gate = gateFor(post, named, tiers);
        if (!gate.ok) {
          report.not_imported.push({ kind, ghost_id: post.id, name: label, reason: gate.reason });
          report.counts[kind].skipped++;
          continue;
        }
        const author = authors.get(post.id);
        const authorId = author?.userId ?? fallback;
        if (kind === 'post' && authorId === null) {
          report.not_imported.push({ kind, ghost_id: post.id, name: label, reason: 'no staff user to be its author: create one with `gatehouse user create` first' });
          report.counts.post.skipped++;
          continue;
        }
        if (gate.widened) report.widened.push({ kind, ghost_id: post.id, slug: label, tiers: gate.widened.tiers, also_readable_by: gate.widened.missing, level: gate.widened.level });
        const body = (post.plaintext ?? (post.html ? plainText(post.html) : '')).trim();
        const source = JSON.stringify(sourceOf(post, body, tagsOf.get(post.id) ?? [], author?.email ?? null, named));
        const outcome = kind === 'post' ? await upsertPost(trx, ctx.clock, post, body, gate.level, authorId as number, source) : await upsertPage(trx, post, body, gate.level, authorId, source);
        report.counts[kind][outcome.result]++;
        if (outcome.result === 'created' && author?.email && author.userId === null) missingAuthors++;
        await remember(trx, ctx.clock, kind, post.id, outcome.localId, source);
      }
    });
  }
  if (missingAuthors > 0) report.notes.push(`${missingAuthors} posts and pages have a Ghost author with no staff account here by email; they are credited to user ${String(fallback)}.`);
}

/**
 * Ghost's feature image as the site shows it: only an address a page can load (https, or a path here);
 * Ghost's own "__GHOST_URL__/content/images/..." stays in gim_source only.
 */
function featureImage(post: GhostPost): string | null {
  const url = typeof post.feature_image === 'string' ? post.feature_image.trim() : '';
  return url !== '' && featureImageProblem(url) === null ? url : null;
}

type Upserted = { result: 'created' | 'updated' | 'unchanged'; localId: number };

function publishState(post: GhostPost): { published: boolean; time: Date | null } {
  if (post.status === 'published' || post.status === 'scheduled') return { published: true, time: time(post.published_at) };
  return { published: false, time: null };
}

async function upsertPost(db: Kysely<GhostDB>, clock: Clock, post: GhostPost, body: string, level: number | null, authorId: number, source: string): Promise<Upserted> {
  const state = publishState(post);
  const values = {
    pst_title: String(post.title ?? '').slice(0, 255),
    pst_link: String(post.slug ?? '').slice(0, 255),
    pst_body: body,
    pst_is_published: state.published,
    pst_published_time: state.time,
    pst_short_description: post.custom_excerpt ? post.custom_excerpt.slice(0, EXCERPT_MAX) : null,
    pst_tier_min_level: level,
    pst_feature_image: featureImage(post),
  };
  const mapped = await mapping(db, 'post', post.id);
  const stored = mapped ? await db.selectFrom('pst_posts').selectAll().where('pst_post_id', '=', mapped.gim_local_id).where('pst_delete_time', 'is', null).executeTakeFirst() : undefined;
  if (!stored) {
    const row = await db.insertInto('pst_posts').values({ ...values, pst_usr_user_id: authorId }).returning('pst_post_id').executeTakeFirstOrThrow();
    // Published on Ghost already: no post.published event (its publication happened on the old site). A
    // post scheduled for later is left to the publication task, which writes the event when it goes out.
    const time = values.pst_published_time === null ? null : new Date(values.pst_published_time);
    if (values.pst_is_published && (time === null || time.getTime() <= clock.nowMs())) {
      await db.insertInto('ppe_post_publication_events').values({ ppe_pst_post_id: row.pst_post_id, ppe_published_time: time, ppe_create_time: clock.now() }).onConflict((oc) => oc.column('ppe_pst_post_id').doNothing()).execute();
    }
    return { result: 'created', localId: row.pst_post_id };
  }
  const same =
    stored.pst_title === values.pst_title &&
    stored.pst_link === values.pst_link &&
    stored.pst_body === values.pst_body &&
    stored.pst_is_published === values.pst_is_published &&
    sameTime(stored.pst_published_time, values.pst_published_time) &&
    stored.pst_short_description === values.pst_short_description &&
    stored.pst_tier_min_level === values.pst_tier_min_level &&
    stored.pst_feature_image === values.pst_feature_image;
  if (same && mapped && sameJson(mapped.gim_source, source)) return { result: 'unchanged', localId: stored.pst_post_id };
  if (!same) await db.updateTable('pst_posts').set(values).where('pst_post_id', '=', stored.pst_post_id).execute();
  return { result: 'updated', localId: stored.pst_post_id };
}

async function upsertPage(db: Kysely<GhostDB>, post: GhostPost, body: string, level: number | null, authorId: number | null, source: string): Promise<Upserted> {
  const state = publishState(post);
  const layout = { html: post.html ?? null, plaintext: body };
  const values = {
    pag_title: String(post.title ?? '').slice(0, 255),
    pag_link: String(post.slug ?? '').slice(0, 255),
    pag_published_time: state.time,
    pag_tier_min_level: level,
    pag_component_layout: JSON.stringify(layout),
    pag_feature_image: featureImage(post),
  };
  const mapped = await mapping(db, 'page', post.id);
  const stored = mapped ? await db.selectFrom('pag_pages').selectAll().where('pag_page_id', '=', mapped.gim_local_id).where('pag_delete_time', 'is', null).executeTakeFirst() : undefined;
  if (!stored) {
    const row = await db.insertInto('pag_pages').values({ ...values, pag_usr_user_id: authorId }).returning('pag_page_id').executeTakeFirstOrThrow();
    return { result: 'created', localId: row.pag_page_id };
  }
  const same =
    stored.pag_title === values.pag_title &&
    stored.pag_link === values.pag_link &&
    sameTime(stored.pag_published_time, values.pag_published_time) &&
    stored.pag_tier_min_level === values.pag_tier_min_level &&
    stored.pag_feature_image === values.pag_feature_image &&
    sameJson(stored.pag_component_layout, JSON.stringify(layout));
  if (same && mapped && sameJson(mapped.gim_source, source)) return { result: 'unchanged', localId: stored.pag_page_id };
  if (!same) await db.updateTable('pag_pages').set(values).where('pag_page_id', '=', stored.pag_page_id).execute();
  return { result: 'updated', localId: stored.pag_page_id };
}
