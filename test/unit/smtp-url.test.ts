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

describe('the smtp_url setting', () => {
  it('takes an smtp:// or smtps:// URL, or nothing', async () => {
    const { settingDefinition, validateSettingValue } = await import('../../src/settings/registry.js');
    const def = settingDefinition('smtp_url')!;
    expect(def.secret).toBe(true);
    for (const ok of ['', 'smtp://u:p@smtp.example.org:587', 'smtps://smtp.example.org']) expect(validateSettingValue(def, ok)).toBe(ok);
    for (const bad of ['smtp.example.org', 'http://smtp.example.org', 'smtp://host/path']) expect(() => validateSettingValue(def, bad)).toThrow(/smtp:\/\/user:pass@host:587/);
  });
});
