import { formatTimestamp } from '../lib/time.js';
import type { ApiError } from './errors.js';

export const API_VERSION = '1.0';

export interface SuccessEnvelope {
  api_version: typeof API_VERSION;
  success_message: string;
  data: unknown;
  redirect?: string;
  num_results?: number;
  page?: number;
  numperpage?: number;
}

export interface ErrorEnvelope {
  api_version: typeof API_VERSION;
  errortype: string;
  error: string;
  data: Record<string, unknown>;
  validation_errors?: Record<string, string>;
}

export function success(data: unknown, successMessage = '', extra: Partial<SuccessEnvelope> = {}): SuccessEnvelope {
  return { api_version: API_VERSION, success_message: successMessage, data, ...extra };
}

export function failure(err: ApiError): ErrorEnvelope {
  const body: ErrorEnvelope = { api_version: API_VERSION, errortype: err.errortype, error: err.message, data: err.data };
  if (err.errortype === 'ValidationError') body.validation_errors = err.validationErrors ?? {};
  return body;
}

/**
 * JSON for API payloads: Dates leave as the contract's 'YYYY-MM-DD HH:MM:SS' (UTC), and bigints as
 * numbers. JSON.stringify calls toJSON before the replacer, so the replacer looks at the holder's raw value.
 */
function apiReplacer(this: Record<string, unknown>, key: string, value: unknown): unknown {
  const raw = this[key];
  if (raw instanceof Date) return Number.isNaN(raw.getTime()) ? null : formatTimestamp(raw);
  if (typeof raw === 'bigint') return Number(raw);
  return value;
}

export function serializeApiPayload(payload: unknown): string {
  return JSON.stringify(payload, apiReplacer);
}
