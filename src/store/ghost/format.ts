import { formatBytes } from '../../lib/byte-size.js';
// The parts of a Ghost JSON export (Ghost 5.x/6.x, `ghost/core/core/server/data/exporter`) that the move in
// and out reads and writes: the `db[0]` wrapper with `meta` and `data`, and the tables named in DESIGN 16.

export interface GhostPost {
  id: string;
  uuid?: string;
  title: string;
  slug: string;
  mobiledoc?: string | null;
  lexical?: string | null;
  html: string | null;
  plaintext: string | null;
  feature_image: string | null;
  featured?: boolean | number;
  type: string;
  status: string;
  visibility: string;
  created_at: string;
  updated_at?: string | null;
  published_at: string | null;
  custom_excerpt: string | null;
  [key: string]: unknown;
}

export interface GhostProduct {
  id: string;
  name: string;
  slug: string;
  active: boolean | number;
  type: string;
  description?: string | null;
  monthly_price?: number | null;
  yearly_price?: number | null;
  currency?: string | null;
  [key: string]: unknown;
}

export interface GhostTag {
  id: string;
  name: string;
  slug: string;
  [key: string]: unknown;
}

export interface GhostUser {
  id: string;
  name: string;
  slug: string;
  email: string;
  [key: string]: unknown;
}

export interface GhostLink {
  id?: string;
  post_id: string;
  sort_order?: number;
  [key: string]: unknown;
}

export interface GhostData {
  posts: GhostPost[];
  tags: GhostTag[];
  posts_tags: (GhostLink & { tag_id: string })[];
  products: GhostProduct[];
  posts_products: (GhostLink & { product_id: string })[];
  users: GhostUser[];
  posts_authors: (GhostLink & { author_id: string })[];
  settings: { key: string; value: string | null; [key: string]: unknown }[];
  members: { id: string; status: string; [key: string]: unknown }[];
}

export interface GhostExport {
  db: [{ meta: { exported_on: number; version: string }; data: Partial<GhostData> & Record<string, unknown> }];
}

/** A file refused before anything is written: not a Ghost export, too large, or malformed. */
export class GhostExportError extends Error {}

/** The largest export read whole (bytes); Ghost's content exports are far smaller (images are URLs). */
export const GHOST_EXPORT_MAX_BYTES = 64_000_000;

const TABLES = ['posts', 'tags', 'posts_tags', 'products', 'posts_products', 'users', 'posts_authors', 'settings', 'members'] as const;

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Parses and checks a Ghost export: `{db: [{meta, data}]}` (what Ghost writes) or `{meta, data}` (what its
 * importer also takes). Every table read must be a list of objects with a string `id` where Ghost has one.
 */
export function parseGhostExport(text: string): { meta: { version: string; exported_on: number | null }; data: GhostData } {
  if (Buffer.byteLength(text) > GHOST_EXPORT_MAX_BYTES) throw new GhostExportError(`The file is larger than ${formatBytes(GHOST_EXPORT_MAX_BYTES)}: not a Ghost content export`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new GhostExportError('The file is not JSON: expected a Ghost content export');
  }
  const root = isRecord(parsed) && Array.isArray(parsed.db) ? parsed.db[0] : parsed;
  if (!isRecord(root) || !isRecord(root.meta) || !isRecord(root.data)) {
    throw new GhostExportError('The file is not a Ghost export: expected {"db": [{"meta": {...}, "data": {...}}]}');
  }
  const version = root.meta.version;
  if (typeof version !== 'string' || version === '') throw new GhostExportError('The file is not a Ghost export: meta.version is missing');
  if (!Array.isArray(root.data.posts)) throw new GhostExportError('The file is not a Ghost export: data.posts is missing');
  const data: Record<string, unknown[]> = {};
  for (const table of TABLES) {
    const rows = root.data[table] ?? [];
    if (!Array.isArray(rows) || !rows.every(isRecord)) throw new GhostExportError(`The Ghost export is malformed: data.${table} must be a list of objects`);
    data[table] = rows;
  }
  const exportedOn = typeof root.meta.exported_on === 'number' ? root.meta.exported_on : null;
  return { meta: { version, exported_on: exportedOn }, data: data as unknown as GhostData };
}
