import { describe, expect, it } from 'vitest';
import { clientErrorRefusal, requestTargetPath } from '../../src/http/client-error.js';

describe('requestTargetPath: where a request the parser refused was going', () => {
  it.each([
    ['GET /api/v1/auth/session?q=aaaa HTTP/1.1\r\nHost: x\r\n', '/api/v1/auth/session?q=aaaa'],
    ['post /login HTTP/1.1\r\n', '/login'],
    ['GET http://example.com/api/v1/x?y HTTP/1.1\r\n', '/api/v1/x'],
    ['GET https://example.com HTTP/1.1\r\n', '/'],
  ])('reads %j as %s', (raw, path) => {
    expect(requestTargetPath(Buffer.from(raw, 'latin1'))).toBe(path);
  });

  it.each([
    ['no bytes', undefined],
    ['an empty packet', Buffer.alloc(0)],
    ['a later chunk of a long URL', Buffer.from('aaaaaaaaaaaaaaaa HTTP/1.1\r\n')],
    ['header bytes', Buffer.from('X-Padding: aaaa\r\n')],
    ['a target that is neither a path nor absolute', Buffer.from('GET * HTTP/1.1\r\n')],
  ])('knows nothing from %s', (_name, raw) => {
    expect(requestTargetPath(raw)).toBeUndefined();
  });
});

describe('clientErrorRefusal', () => {
  const refusal = (code: string) => {
    const r = clientErrorRefusal(Object.assign(new Error('parse'), { code }));
    return [r.status, r.errortype, r.message];
  };
  it('maps the parser and timeout codes to the contract vocabulary', () => {
    expect(refusal('HPE_HEADER_OVERFLOW')).toEqual([431, 'TransactionError', 'Request URL or headers are too large']);
    expect(refusal('ERR_HTTP_REQUEST_TIMEOUT')).toEqual([408, 'TransactionError', 'Request timed out']);
    expect(refusal('HPE_INVALID_METHOD')).toEqual([400, 'TransactionError', 'Malformed request']);
    expect(refusal('HPE_INVALID_VERSION')).toEqual([400, 'TransactionError', 'Malformed request']);
  });
});
