import type { ApiError } from './errors.js';
import { wireJson } from './wire-json.js';

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

/** The payload as the API's JSON (the contract's value conventions: see wireJson). */
export function serializeApiPayload(payload: unknown): string {
  return wireJson(payload) ?? 'null';
}
