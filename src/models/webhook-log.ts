import { col, defineModel } from './define.js';

// Provider event ids, unique per provider (a duplicate delivery changes nothing). Never over CRUD.
export const WebhookLog = defineModel({
  className: 'WebhookLog',
  table: 'wbh_webhook_logs',
  prefix: 'wbh',
  primaryKey: 'wbh_webhook_log_id',
  owner: null,
  deleteColumn: null,
  columns: {
    wbh_webhook_log_id: col.serial(),
    wbh_provider: col.varchar(50, { required: true }),
    wbh_event_type: col.varchar(100),
    wbh_event_id: col.varchar(255, { required: true }),
    wbh_payload: col.jsonb(),
    wbh_processed: col.bool(),
    wbh_error_message: col.text(),
    wbh_create_time: col.timestamp(),
  },
  exposure: { readable: false, writable: false },
});
