import type { Action } from '../define.js';
import webhookEndpointCreate from './webhook_endpoint_create.js';
import webhookEndpointDelete from './webhook_endpoint_delete.js';
import webhookEndpointList from './webhook_endpoint_list.js';
import webhookEndpointRotateSecret from './webhook_endpoint_rotate_secret.js';
import webhookEndpointTest from './webhook_endpoint_test.js';
import webhookEndpointUpdate from './webhook_endpoint_update.js';
import webhookEventList from './webhook_event_list.js';
import webhookRedeliver from './webhook_redeliver.js';

export const webhookActions: Action[] = [
  webhookEndpointCreate,
  webhookEndpointUpdate,
  webhookEndpointDelete,
  webhookEndpointRotateSecret,
  webhookEndpointTest,
  webhookEndpointList,
  webhookEventList,
  webhookRedeliver,
];
