import { describe, expect, it } from 'vitest';
import { parseSmtpUrl } from '../../src/mail/mailer.js';

describe('smtp_url', () => {
  it('reads host, port, user and password, percent-decoded', () => {
    expect(parseSmtpUrl('smtp://mailer%40example.org:p%2Fss@smtp.example.org:2525')).toEqual({ host: 'smtp.example.org', port: 2525, user: 'mailer@example.org', password: 'p/ss', secure: false });
  });
  it('defaults the port to 587, or 465 with TLS from the start for smtps', () => {
    expect(parseSmtpUrl('smtp://smtp.example.org')).toEqual({ host: 'smtp.example.org', port: 587, user: '', password: '', secure: false });
    expect(parseSmtpUrl('smtps://u:p@smtp.example.org')).toEqual({ host: 'smtp.example.org', port: 465, user: 'u', password: 'p', secure: true });
  });
  it('is null for anything else', () => {
    for (const bad of ['', 'smtp.example.org', 'http://smtp.example.org', 'smtp://']) expect(parseSmtpUrl(bad)).toBeNull();
  });
});
