import { standardTimes } from './common.js';
import { col, defineModel } from './define.js';

// Staff-only (DESIGN 7): eml_usr_user_id records the staff author and is not an owner column.
export const Email = defineModel({
  className: 'Email',
  table: 'eml_emails',
  prefix: 'eml',
  primaryKey: 'eml_email_id',
  owner: null,
  columns: {
    eml_email_id: col.serial(),
    eml_description: col.varchar(255),
    eml_usr_user_id: col.bigint(),
    eml_from_address: col.varchar(255),
    eml_from_name: col.varchar(255),
    eml_subject: col.varchar(255),
    eml_preview_text: col.varchar(255),
    eml_reply_to: col.varchar(255),
    eml_message_html: col.text(),
    eml_message_plain: col.text(),
    eml_message_template_html: col.text(),
    eml_message_template_plain: col.text(),
    eml_sent_time: col.timestamp(),
    eml_status: col.smallint(),
    eml_scheduled_time: col.timestamp(),
    eml_type: col.smallint(),
    eml_ctt_contact_type_id: col.int(),
    eml_mlt_mailing_list_id: col.bigint(),
    ...standardTimes('eml'),
  },
  exposure: { readable: true, writable: true },
});
