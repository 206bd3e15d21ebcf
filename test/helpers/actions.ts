import { randomHex } from '../../src/lib/crypto.js';

/** A multipart/form-data body: plain fields, then files (as attachments[] unless named otherwise). */
export function multipartBody(
  fields: Record<string, string | string[]>,
  files: Array<{ field?: string; filename: string; type: string; content: string | Buffer }> = [],
): { payload: Buffer; headers: Record<string, string> } {
  const boundary = `----gatehouse${randomHex(8)}`;
  const parts: Buffer[] = [];
  for (const [name, value] of Object.entries(fields)) {
    for (const v of Array.isArray(value) ? value : [value]) {
      parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${v}\r\n`));
    }
  }
  for (const f of files) {
    parts.push(
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${f.field ?? 'attachments[]'}"; filename="${f.filename}"\r\nContent-Type: ${f.type}\r\n\r\n`),
      Buffer.isBuffer(f.content) ? f.content : Buffer.from(f.content),
      Buffer.from('\r\n'),
    );
  }
  parts.push(Buffer.from(`--${boundary}--\r\n`));
  return { payload: Buffer.concat(parts), headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}

/** A form-urlencoded body from pairs (repeat a name for a list). */
export function formBody(pairs: Array<[string, string]>): { payload: string; headers: Record<string, string> } {
  return {
    payload: pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&'),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  };
}
