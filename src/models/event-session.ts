import { standardTimes, viewableParent } from './common.js';
import { col, defineModel } from './define.js';
import { Event } from './event.js';

const ofViewableEvent = viewableParent(Event, 'evs_evt_event_id');

export const EventSession = defineModel({
  className: 'EventSession',
  table: 'evs_event_sessions',
  prefix: 'evs',
  primaryKey: 'evs_event_session_id',
  owner: null,
  columns: {
    evs_event_session_id: col.serial(),
    evs_evt_event_id: col.bigint({ required: true }),
    evs_title: col.varchar(255),
    evs_content: col.text(),
    evs_start_time: col.timestamp(),
    evs_start_time_local: col.timestamp(),
    evs_end_time: col.timestamp(),
    evs_end_time_local: col.timestamp(),
    evs_links: col.text(),
    evs_picture_link: col.varchar(255),
    evs_is_public: col.bool(),
    evs_order: col.smallint(),
    evs_vid_video_id: col.bigint(),
    evs_session_number: col.smallint(),
    evs_tier_min_level: col.int(),
    ...standardTimes('evs'),
  },
  exposure: { readable: true, writable: true, publicRead: true },
  // A public session (evs_is_public) of an event the reader may see: live, not private, and its tier
  // gate open to the reader. The session's own gate (evs_tier_min_level) previews, as on every model.
  viewable: (eb, reader) => eb.and([eb('evs_is_public', '=', true), ofViewableEvent(eb, reader)]),
  gate: { minLevel: 'evs_tier_min_level', body: ['evs_content', 'evs_links'] },
});
