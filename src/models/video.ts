import { staffOnly, standardTimes, viewableVideo } from './common.js';
import { col, defineModel } from './define.js';

export const Video = defineModel({
  className: 'Video',
  table: 'vid_videos',
  prefix: 'vid',
  primaryKey: 'vid_video_id',
  owner: 'vid_usr_user_id',
  columns: {
    vid_video_id: col.serial(),
    vid_title: col.varchar(255),
    vid_link: col.varchar(255),
    vid_description: col.text(),
    vid_usr_user_id: col.bigint(),
    vid_source: col.smallint(),
    vid_video_number: col.varchar(255),
    vid_video_text: col.text(),
    vid_version: col.smallint(),
    vid_min_permission: col.smallint(),
    vid_grp_group_id: col.int(),
    vid_evt_event_id: col.int(),
    vid_tier_min_level: col.int(),
    ...standardTimes('vid'),
  },
  exposure: { readable: true, writable: true, publicRead: true },
  checks: { write: staffOnly },
  viewable: viewableVideo,
  gate: { minLevel: 'vid_tier_min_level', body: ['vid_video_number', 'vid_video_text'] },
});
