import accountEdit from './account/account_edit.js';
import addressEdit from './account/address_edit.js';
import changePasswordRequired from './account/change_password_required.js';
import contactPreferences from './account/contact_preferences.js';
import passwordEdit from './account/password_edit.js';
import passwordReset1 from './account/password_reset_1.js';
import passwordReset2 from './account/password_reset_2.js';
import passwordSet from './account/password_set.js';
import phoneNumbersEdit from './account/phone_numbers_edit.js';
import register from './account/register.js';
import type { Action } from './define.js';
import cart from './store/cart.js';
import cartClear from './store/cart_clear.js';
import changeTier from './store/change_tier.js';
import ordersRecurringAction from './store/orders_recurring_action.js';
import subscriptionSummary from './store/subscription_summary.js';
import storeAccountTokenAction from './store/store_account_token.js';
import storeResync from './store/store_resync.js';
import eventRegister from './events/event_register.js';
import eventSessions from './events/event_sessions.js';
import eventSessionsCourse from './events/event_sessions_course.js';
import eventWaitingList from './events/event_waiting_list.js';
import eventWithdraw from './events/event_withdraw.js';
import survey from './surveys/survey.js';
import { passkeyActions } from './passkeys/index.js';
import { vaultActions } from './vault/index.js';
import { driveManageActions, driveUploadActions } from './drive/index.js';
import { webhookActions } from './webhooks/index.js';
import { memberImportActions } from './members/index.js';
import { ActionRegistry } from './registry.js';

/** Core actions, by name. A new action is one file and one line here. */
export const coreActions: Action[] = [
  cart,
  cartClear,
  register,
  passwordReset1,
  passwordReset2,
  passwordSet,
  passwordEdit,
  changePasswordRequired,
  contactPreferences,
  accountEdit,
  addressEdit,
  phoneNumbersEdit,
  eventRegister,
  eventWithdraw,
  eventWaitingList,
  eventSessions,
  eventSessionsCourse,
  survey,
  subscriptionSummary,
  ordersRecurringAction,
  changeTier,
  storeAccountTokenAction,
  storeResync,
  ...driveManageActions,
  ...driveUploadActions,
  ...memberImportActions,
  ...passkeyActions,
  ...vaultActions,
  ...webhookActions,
];

/**
 * The one registry. Building it validates every descriptor, so a contradiction stops the process at start.
 * Plugins' actions join it when their modules are installed (src/boot/plugins.ts).
 */
export const actionRegistry = new ActionRegistry(coreActions);
