import type { Kysely } from 'kysely';
import type { DB } from '../db/types.js';

/**
 * The editorial rules of posts and pages that the staff editor applies on top of the models' column
 * checks: link names (slugs), the tier gate's level, publication (draft, now, or at a time), the feature
 * image URL and early-access hours. Raw CRUD writes bypass business validation (SPEC, CRUD rule 6);
 * these are the rules for the site's own writes.
 */
export type ContentKind = 'post' | 'page';

interface KindTable {
  table: 'pst_posts' | 'pag_pages';
  id: string;
  link: string;
  deleted: string;
}

const TABLES: Record<ContentKind, KindTable> = {
  post: { table: 'pst_posts', id: 'pst_post_id', link: 'pst_link', deleted: 'pst_delete_time' },
  page: { table: 'pag_pages', id: 'pag_page_id', link: 'pag_link', deleted: 'pag_delete_time' },
};

const anyDb = (db: Kysely<DB>) => db as unknown as Kysely<any>;

/** pst_link and pag_link are varchar(255); a made-up slug keeps room for a "-N" suffix. */
export const SLUG_MAX = 255;
const SLUG_RE = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

/** A link name made from a title: lower-case ASCII words joined by hyphens (accents dropped). */
export function slugFromTitle(title: string, fallback: string): string {
  const slug = title
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 200)
    .replace(/-+$/, '');
  return slug || fallback;
}

/** Why a typed link name cannot be used, or null. */
export function slugProblem(slug: string): string | null {
  if ([...slug].length > SLUG_MAX) return `Use at most ${SLUG_MAX} characters.`;
  if (!SLUG_RE.test(slug)) return 'Use lower-case letters, digits and single hyphens, for example my-first-post.';
  return null;
}

/** Whether another live post (or page) already has this link name. */
export async function slugTaken(db: Kysely<DB>, kind: ContentKind, slug: string, exceptId: number | null): Promise<boolean> {
  const t = TABLES[kind];
  let q = anyDb(db).selectFrom(t.table).select(t.id).where(t.link, '=', slug).where(t.deleted, 'is', null);
  if (exceptId !== null) q = q.where(t.id, '<>', exceptId);
  return (await q.limit(1).executeTakeFirst()) !== undefined;
}

/** `base`, or `base-2`, `base-3`, ... : the first link name no other live post (or page) has. */
export async function freeSlug(db: Kysely<DB>, kind: ContentKind, base: string, exceptId: number | null): Promise<string> {
  for (let n = 1; n < 1000; n++) {
    const candidate = n === 1 ? base : `${base}-${n}`;
    if (!(await slugTaken(db, kind, candidate, exceptId))) return candidate;
  }
  return `${base}-${Date.now()}`;
}

export interface GateTier {
  level: number;
  name: string;
  display_name: string;
  active: boolean;
}

/** The live (not deleted) tiers, lowest level first: the levels a post or page may be gated at. */
export async function gateTiers(db: Kysely<DB>): Promise<GateTier[]> {
  const rows = await db
    .selectFrom('sbt_subscription_tiers')
    .select(['sbt_tier_level', 'sbt_name', 'sbt_display_name', 'sbt_is_active'])
    .where('sbt_delete_time', 'is', null)
    .orderBy('sbt_tier_level')
    .orderBy('sbt_subscription_tier_id')
    .execute();
  return rows.map((r) => ({ level: Number(r.sbt_tier_level), name: r.sbt_name, display_name: r.sbt_display_name, active: r.sbt_is_active }));
}

/** Why a gate level cannot be used (it must be the level of an existing tier), or null. */
export function gateLevelProblem(level: number | null, tiers: readonly GateTier[]): string | null {
  if (level === null) return null;
  return tiers.some((t) => t.level === level) ? null : 'Choose one of the listed tiers.';
}

/** Early access: hours after publication at which the gate lifts for everyone (DESIGN 7); ten years at most. */
export const EARLY_ACCESS_MAX_HOURS = 87_600;

export function earlyAccessProblem(hours: number | null): string | null {
  if (hours === null) return null;
  if (!Number.isInteger(hours) || hours < 0 || hours > EARLY_ACCESS_MAX_HOURS) return `Enter whole hours from 0 to ${EARLY_ACCESS_MAX_HOURS}, or leave empty.`;
  return null;
}

/** What the editor's publication choice means. */
export type PublishChoice = 'draft' | 'publish' | 'schedule';

export const PUBLISH_CHOICES: readonly PublishChoice[] = ['draft', 'publish', 'schedule'];

export interface Publication {
  published: boolean;
  /** The publish time: in the future while scheduled. */
  time: Date | null;
}

/**
 * The publication a choice makes. "Publish now" keeps the publish time of an item already out (editing
 * a published post does not move its date) and is now otherwise; "schedule" needs a time still ahead; a
 * draft has no publish time (pag_published_time null is a page's draft state).
 */
export function choosePublication(choice: PublishChoice, at: Date | null, stored: Publication | null, now: Date): Publication | { error: string } {
  switch (choice) {
    case 'draft':
      return { published: false, time: null };
    case 'publish': {
      const out = stored?.published && stored.time !== null && stored.time.getTime() <= now.getTime();
      return { published: true, time: out ? stored!.time : now };
    }
    case 'schedule':
      if (at === null) return { error: 'Enter the date and time to publish at.' };
      if (at.getTime() <= now.getTime()) return { error: 'Choose a time in the future, or choose Publish now.' };
      return { published: true, time: at };
  }
}

/** The state a post or page is in for readers at `now`. */
export function publicationState(p: Publication, now: Date): 'draft' | 'scheduled' | 'published' {
  if (!p.published) return 'draft';
  return p.time !== null && p.time.getTime() > now.getTime() ? 'scheduled' : 'published';
}

/** The feature image column's size (migration 0042). */
export const FEATURE_IMAGE_MAX = 1000;

/**
 * Why a feature image URL cannot be used, or null: an https URL or a path on this site (pages load
 * images from https origins only).
 */
export function featureImageProblem(url: string): string | null {
  if (url === '') return null;
  if (url.length > FEATURE_IMAGE_MAX) return `Use at most ${FEATURE_IMAGE_MAX} characters.`;
  if (/^\/(?![/\\])\S*$/.test(url)) return null;
  try {
    const parsed = new URL(url);
    if (parsed.protocol === 'https:' && !/\s/.test(url)) return null;
  } catch {
    // not a URL
  }
  return 'Enter an https:// address of an image, or a path on this site starting with /.';
}
