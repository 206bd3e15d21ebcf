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
 * A payload with the contract's value conventions applied, ready for the plain JSON.stringify: Dates become
 * 'YYYY-MM-DD HH:MM:SS' (UTC; an invalid Date null), bigints numbers, other toJSON values their JSON form.
 * Copy-on-write: an object or array is copied only when something in it changes, and the input is never
 * modified. (A replacer function would do the same, but it takes V8 off its fast stringify path: twice
 * the time on a page of rows.)
 */
/** A Date as the contract writes it ('YYYY-MM-DD HH:MM:SS', UTC); an invalid Date is null. */
export function wireTimestamp(d: Date): string | null {
  return Number.isNaN(d.getTime()) ? null : formatTimestamp(d);
}

function toWireValue(value: unknown, key: string): unknown {
  if (typeof value === 'bigint') return Number(value);
  if (value === null || typeof value !== 'object') return value;
  if (value instanceof Date) return wireTimestamp(value);
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return toWireValue((value as { toJSON: (k: string) => unknown }).toJSON(key), key);
  if (Array.isArray(value)) {
    let out: unknown[] = value;
    for (let i = 0; i < value.length; i++) {
      const item = value[i];
      const wire = toWireValue(item, String(i));
      if (wire !== item) {
        if (out === value) out = value.slice();
        out[i] = wire;
      }
    }
    return out;
  }
  const record = value as Record<string, unknown>;
  let out = record;
  for (const k of Object.keys(record)) {
    const item = record[k];
    const wire = toWireValue(item, k);
    if (wire !== item) {
      if (out === record) out = { ...record };
      out[k] = wire;
    }
  }
  return out;
}

export function serializeApiPayload(payload: unknown): string {
  return JSON.stringify(toWireValue(payload, ''));
}
