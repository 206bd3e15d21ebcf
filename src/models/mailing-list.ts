import { standardTimes } from './common.js';
import { col, defineModel } from './define.js';

export const MailingList = defineModel({
  className: 'MailingList',
  table: 'mlt_mailing_lists',
  prefix: 'mlt',
  primaryKey: 'mlt_mailing_list_id',
  owner: null,
  columns: {
    mlt_mailing_list_id: col.serial(),
    mlt_name: col.varchar(255, { required: true }),
    mlt_description: col.varchar(255),
    mlt_provider_list_id: col.varchar(255),
    mlt_visibility: col.smallint(),
    mlt_is_active: col.bool(),
    mlt_link: col.varchar(255, { required: true }),
    mlt_emt_email_template_id: col.int(),
    mlt_fil_file_id: col.bigint(),
    mlt_ctt_contact_type_id: col.int(),
    mlt_tier_min_level: col.int(),
    ...standardTimes('mlt'),
  },
  exposure: { readable: true, writable: true, publicRead: true, unreadable: ['mlt_provider_list_id'] },
  gate: { minLevel: 'mlt_tier_min_level' },
});
