/** The contract's closed errortype vocabulary. */
export const ERROR_TYPES = [
  'AuthenticationError',
  'TransactionError',
  'ActionError',
  'ValidationError',
  'SecurityError',
  'UpgradeRequired',
  'RateLimitError',
  'NotFound',
] as const;
export type ErrorType = (typeof ERROR_TYPES)[number];

export interface ApiErrorOptions {
  data?: Record<string, unknown>;
  validationErrors?: Record<string, string>;
  headers?: Record<string, string>;
}

/** Every refusal the API gives is one of these; the front controller turns it into the error envelope. */
export class ApiError extends Error {
  readonly status: number;
  readonly errortype: ErrorType;
  readonly data: Record<string, unknown>;
  readonly validationErrors: Record<string, string> | undefined;
  readonly headers: Record<string, string>;

  constructor(status: number, errortype: ErrorType, message: string, opts: ApiErrorOptions = {}) {
    // A refusal is an expected outcome, not a fault: skip capturing a stack trace (it costs more than the
    // rest of a 404's pipeline). Unexpected errors keep theirs.
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(message);
    Error.stackTraceLimit = limit;
    this.name = 'ApiError';
    this.status = status;
    this.errortype = errortype;
    this.data = opts.data ?? {};
    this.validationErrors = opts.validationErrors;
    this.headers = opts.headers ?? {};
  }
}

export const isApiError = (e: unknown): e is ApiError => e instanceof ApiError;

export const notFound = (message = 'Not found') => new ApiError(404, 'NotFound', message);
/** The one answer for a path the API does not serve (unknown, or a class not exposed for the verb). */
export const noEndpoint = (request: { method: string; url: string }) => notFound(`No API endpoint ${request.method} ${request.url.split('?')[0]}`);
export const authError = (status: 400 | 401 | 403, message: string) => new ApiError(status, 'AuthenticationError', message);
export const transactionError = (message: string, status = 400, data?: Record<string, unknown>) =>
  new ApiError(status, 'TransactionError', message, data ? { data } : {});
export const actionError = (status: number, message: string, data?: Record<string, unknown>) =>
  new ApiError(status, 'ActionError', message, data ? { data } : {});
/** A business-logic refusal: 422 ActionError. */
export const businessError = (message: string, data?: Record<string, unknown>) => actionError(422, message, data);
export const validationError = (validationErrors: Record<string, string>, message = 'Input validation failed') =>
  new ApiError(422, 'ValidationError', message, { validationErrors });
