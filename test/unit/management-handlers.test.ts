import { readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Principal } from '../../src/accounts/auth/principal.js';
import { ApiError } from '../../src/http/errors.js';
import { MANAGEMENT_DEFAULT_AUTH, ManagementDefinitionError, defineManagementHandler, effectiveAuth, type ManagementHandler } from '../../src/surfaces/management/define.js';
import { enforceManagementAuth } from '../../src/surfaces/management/index.js';
import { managementHandlers } from '../../src/surfaces/management/registry.js';

const HANDLERS_DIR = path.resolve(import.meta.dirname, '../../src/surfaces/management/handlers');

function filesUnder(dir: string, rel = ''): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? filesUnder(path.join(dir, e.name), `${rel}${e.name}/`) : e.name.endsWith('.ts') ? [`${rel}${e.name.slice(0, -3)}`] : [],
  );
}

const base = (extra: Partial<ManagementHandler>): ManagementHandler => ({
  method: 'GET',
  path: 'probe',
  description: 'probe',
  handle: async () => ({}),
  ...extra,
});

const principal = (credential: Principal['credential'], usrPermission: number, capability = 4): Principal => ({
  credential,
  apiKey: credential === 'machine' || credential === 'session' ? { apk_api_key_id: 1, apk_type: credential, apk_permission: capability, apk_public_key: 'pk' } : null,
  user: { usr_user_id: 1, usr_email: 'a@b.c', usr_first_name: 'A', usr_last_name: null, usr_nickname: null, usr_permission: usrPermission },
  capability,
});

describe('management handler registry', () => {
  it('maps each handler path to its file under handlers/ (nested paths are subfolders; root.ts is the root)', () => {
    const files = filesUnder(HANDLERS_DIR).sort();
    const paths = managementHandlers.map((h) => (h.path === '' ? 'root' : h.path)).sort();
    expect(paths).toEqual(files);
  });

  it('holds only GET endpoints, each described', () => {
    for (const h of managementHandlers) {
      expect(h.method).toBe('GET');
      expect(h.description.length).toBeGreaterThan(10);
    }
  });
});

describe('management authorization contract', () => {
  it('defaults to machine key, user permission 10, no apk_permission check', () => {
    expect(MANAGEMENT_DEFAULT_AUTH).toEqual({ requires_machine_key: true, min_user_permission: 10, capability: null });
  });

  it('lets a handler tighten: a higher user floor, a capability check', () => {
    const h = defineManagementHandler(base({ auth: { min_user_permission: 12, capability: 'read' } }));
    expect(effectiveAuth(h)).toEqual({ requires_machine_key: true, min_user_permission: 12, capability: 'read' });
  });

  it('refuses any handler that would loosen the default', () => {
    const loosening: Array<Record<string, unknown>> = [
      { min_user_permission: 9 },
      { min_user_permission: 5 },
      { min_user_permission: 10.5 },
      { requires_machine_key: false },
      { requires_browser_session: true },
      { allow_guest: true },
      { session_write: true },
      { requires_session: true },
      { capability: 'admin' },
    ];
    for (const auth of loosening) {
      expect(() => defineManagementHandler(base({ auth: auth as ManagementHandler['auth'] })), JSON.stringify(auth)).toThrow(ManagementDefinitionError);
    }
  });

  it('refuses a non-GET handler: management is read-only by construction', () => {
    expect(() => defineManagementHandler(base({ method: 'POST' as 'GET' }))).toThrow(ManagementDefinitionError);
  });

  it('refuses session keys, browser sessions and guests even for a superadmin, and non-superadmin machine keys', () => {
    const refuse = (p: Principal, auth = MANAGEMENT_DEFAULT_AUTH) => {
      try {
        enforceManagementAuth(p, auth);
      } catch (e) {
        return e instanceof ApiError ? `${e.status} ${e.errortype}` : String(e);
      }
      return 'admitted';
    };
    expect(refuse(principal('machine', 10))).toBe('admitted');
    expect(refuse(principal('machine', 10, 2))).toBe('admitted');
    expect(refuse(principal('session', 10))).toBe('403 AuthenticationError');
    expect(refuse(principal('browser', 10))).toBe('403 AuthenticationError');
    expect(refuse({ ...principal('guest', 0), user: null })).toBe('403 AuthenticationError');
    expect(refuse(principal('machine', 9))).toBe('403 AuthenticationError');
    // A tightened handler: floor 12, capability read.
    const tight = { requires_machine_key: true as const, min_user_permission: 12, capability: 'read' as const };
    expect(refuse(principal('machine', 10), tight)).toBe('403 AuthenticationError');
    expect(refuse(principal('machine', 12, 2), tight)).toBe('403 AuthenticationError');
    expect(refuse(principal('machine', 12, 1), tight)).toBe('admitted');
  });
});
