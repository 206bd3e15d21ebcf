import { ERROR_TYPES, type ErrorType } from '../http/errors.js';

/** One row of the contract's error tables (SPEC "Errors"), or of the front controller's own refusals. */
export interface ErrorRow {
  status: number;
  errortype: ErrorType;
  meaning: string;
}

const row = (status: number, errortype: ErrorType, meaning: string): ErrorRow => ({ status, errortype, meaning });

/** The refusals every operation under /api/v1 may give, per part of the pipeline that gives them. */
export const ERROR_ROWS = {
  /** Transport: HTTPS, the client-version handshake, the rate limits, and an unexpected fault. */
  transport: [
    row(426, 'SecurityError', 'HTTPS required'),
    row(426, 'UpgradeRequired', 'client_version below the configured minimum for the client_app'),
    row(429, 'RateLimitError', 'rate limit exceeded; header Retry-After and data {limit, window_seconds, count, retry_after_seconds}'),
    row(500, 'TransactionError', 'unexpected server fault; the message carries a reference'),
  ],
  /** Reading a request body. */
  body: [
    row(400, 'TransactionError', 'malformed request body'),
    row(413, 'TransactionError', 'request body is too large'),
    row(415, 'TransactionError', 'unsupported content type'),
  ],
  /** Key headers or a browser session (SPEC status table, AuthenticationError rows). */
  authentication: [
    row(400, 'AuthenticationError', 'missing headers, invalid key, deleted user'),
    row(401, 'AuthenticationError', 'wrong secret, IP restricted, inactive, expired or revoked key; anonymous principal where guests are not allowed'),
    row(403, 'AuthenticationError', 'insufficient permission, wrong credential kind for the endpoint, missing or wrong CSRF token'),
  ],
  crud: [
    row(400, 'TransactionError', 'object not found, validation failure, save error, invalid sort column'),
    row(404, 'NotFound', 'class not exposed for the verb (indistinguishable from a non-existent class)'),
  ],
  /** SPEC "Action errors". */
  action: [
    row(404, 'ActionError', 'unknown action, action without descriptor, inactive or unknown plugin'),
    row(409, 'ActionError', "Idempotency-Key reused with a different body (data.reason 'idempotency_key_reused') or original still executing (the same reason, plus data.in_progress true: retry later); or a sealed stored response cannot be opened (sealed_replay_locked), or the stored answer held a secret and was not kept (secret_answer_not_kept)"),
    row(422, 'ActionError', 'business-logic error (feature disabled, invalid state)'),
    row(422, 'ValidationError', 'input validation failed; validation_errors maps field to message'),
    // The logic of some actions refuses with the authentication and transaction vocabulary too.
    row(400, 'TransactionError', 'a record the action needs was not found or could not be saved'),
  ],
  requiresSetting: [row(403, 'ActionError', "the action's requires_setting is falsy (data.setting names it)")],
  form: [
    row(404, 'ActionError', 'unknown action, or an action without a form builder'),
    row(500, 'ActionError', 'the form builder used a non-serializable construct'),
    row(422, 'ActionError', 'the form needs a record or state that is missing (a query parameter naming it, a feature switched off)'),
  ],
  management: [row(404, 'NotFound', 'no management endpoint at this path')],
  notFound: [row(404, 'NotFound', 'no such record or token')],
  conflict: [row(409, 'ActionError', 'conflicting state; data.reason says which')],
  validation: [row(422, 'ValidationError', 'a header or field is invalid; validation_errors maps it to a message')],
} satisfies Record<string, ErrorRow[]>;

export { ERROR_TYPES };
