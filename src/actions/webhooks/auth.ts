import type { AuthContract } from '../auth-contract.js';
import { OUTBOUND_EVENT_TYPES } from '../../outbound/catalogue.js';

/** Webhooks are managed by superadmins only (DESIGN 15), through actions; never under /management. */
export const SUPERADMIN_WRITE: AuthContract = { min_user_permission: 10 };
export const SUPERADMIN_READ: AuthContract = { min_user_permission: 10, capability: 'read' };

/** Types an endpoint can subscribe to (a `test` goes only to the endpoint tested, whatever its filter). */
export const SUBSCRIBABLE_TYPES = OUTBOUND_EVENT_TYPES.filter((t) => t !== 'test');
