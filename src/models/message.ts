import { standardTimes } from './common.js';
import { col, defineModel } from './define.js';

// The sender owns a message (stamped on POST); the recipient reads it too (and finds it in collections).

export const Message = defineModel({
  className: 'Message',
  table: 'msg_messages',
  prefix: 'msg',
  primaryKey: 'msg_message_id',
  owner: 'msg_usr_user_id_sender',
  columns: {
    msg_message_id: col.serial(),
    msg_usr_user_id_recipient: col.bigint(),
    msg_usr_user_id_sender: col.bigint(),
    msg_evt_event_id: col.bigint(),
    msg_cnv_conversation_id: col.bigint(),
    msg_body: col.text({ required: true }),
    msg_sent_time: col.timestamp(),
    ...standardTimes('msg'),
  },
  exposure: { readable: true, writable: true },
  readerColumns: ['msg_usr_user_id_recipient'],
});
