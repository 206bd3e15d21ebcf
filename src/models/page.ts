import { publishedPage, publishedPageRow, staffOnly, standardTimes } from './common.js';
import { col, defineModel } from './define.js';

// pag_component_layout is json in SCHEMA; stored as jsonb here.
export const Page = defineModel({
  className: 'Page',
  table: 'pag_pages',
  prefix: 'pag',
  primaryKey: 'pag_page_id',
  owner: 'pag_usr_user_id',
  columns: {
    pag_page_id: col.serial(),
    pag_title: col.varchar(255),
    pag_link: col.varchar(255),
    pag_usr_user_id: col.bigint(),
    pag_published_time: col.timestamp(),
    pag_fil_file_id: col.bigint(),
    pag_tier_min_level: col.int(),
    pag_tier_public_after_hours: col.int(),
    pag_component_layout: col.jsonb(),
    pag_template: col.varchar(128),
    ...standardTimes('pag'),
  },
  exposure: { readable: true, writable: true, publicRead: true },
  checks: { write: staffOnly },
  viewable: publishedPage,
  viewableRow: publishedPageRow,
  viewableTimes: ['pag_published_time'],
  gate: { minLevel: 'pag_tier_min_level', publicAfterHours: 'pag_tier_public_after_hours', publishedTime: 'pag_published_time', body: ['pag_component_layout'] },
});
