import type { ColumnType, Generated, Kysely } from 'kysely';
import type { DB } from '../../db/types.js';

type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;
type Opt<T> = ColumnType<T | null, T | null | undefined, T | null>;

/** The Post columns the Ghost import writes and the export reads (the model declaration is the whole list). */
export interface GhostPostsTable {
  pst_post_id: Generated<number>;
  pst_title: Opt<string>;
  pst_link: Opt<string>;
  pst_usr_user_id: number;
  pst_body: Opt<string>;
  pst_is_published: Opt<boolean>;
  pst_published_time: Opt<Date>;
  pst_short_description: Opt<string>;
  pst_tier_min_level: Opt<number>;
  /** The site's feature image (migration 0042; not a model column). */
  pst_feature_image: Opt<string>;
  pst_create_time: Generated<Date>;
  pst_delete_time: Opt<Date>;
}

export interface GhostPagesTable {
  pag_page_id: Generated<number>;
  pag_title: Opt<string>;
  pag_link: Opt<string>;
  pag_usr_user_id: Opt<number>;
  pag_published_time: Opt<Date>;
  pag_tier_min_level: Opt<number>;
  pag_component_layout: Opt<unknown>;
  pag_feature_image: Opt<string>;
  pag_create_time: Generated<Date>;
  pag_delete_time: Opt<Date>;
}

export type GhostImportKind = 'tier' | 'post' | 'page';

/** Which local row a Ghost object became, and the Ghost fields no column holds (kept for the export). */
export interface GhostImportsTable {
  gim_ghost_import_id: Generated<number>;
  gim_kind: GhostImportKind;
  gim_ghost_id: string;
  gim_local_id: number;
  gim_source: ColumnType<unknown, string, string>;
  gim_create_time: Timestamp;
  gim_update_time: Timestamp;
}

export type GhostDB = DB & { pst_posts: GhostPostsTable; pag_pages: GhostPagesTable; gim_ghost_imports: GhostImportsTable };

/** The service's typed database seen with the three tables the move in and out works on. */
export function ghostDb(db: Kysely<DB>): Kysely<GhostDB> {
  return db as unknown as Kysely<GhostDB>;
}
