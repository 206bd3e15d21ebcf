import { describe, expect, it } from 'vitest';
import {
  BUILT_IN_AUTH,
  SURFACE_AUTH_DEFAULTS,
  authContractProblems,
  enforceAuthContract,
  resolveAuthContract,
  type AuthContract,
  type ResolvedAuthContract,
} from '../../src/actions/auth-contract.js';
import { defineAction } from '../../src/actions/define.js';
import { ActionDefinitionError, ActionRegistry } from '../../src/actions/registry.js';
import type { Credential, Principal } from '../../src/accounts/auth/principal.js';
import { ApiError } from '../../src/http/errors.js';

// For each field: a value the explicit block sets, a different one a surface default sets, and the built-in.
const FIELDS: Array<[keyof AuthContract, unknown, unknown]> = [
  ['capability', 'delete', 'read'],
  ['requires_session', false, true],
  ['requires_machine_key', true, false],
  ['requires_browser_session', true, false],
  ['allow_guest', true, false],
  ['session_write', true, false],
  ['min_user_permission', 10, 5],
];

describe('authorization contract: resolution order per field', () => {
  it.each(FIELDS)('%s: the explicit value wins over the surface default', (name, explicit, surface) => {
    const resolved = resolveAuthContract({ [name]: explicit }, { [name]: surface });
    expect(resolved[name]).toBe(explicit);
  });

  it.each(FIELDS)('%s: the surface default applies when the descriptor is silent', (name, _explicit, surface) => {
    expect(resolveAuthContract({}, { [name]: surface })[name]).toBe(surface);
    expect(resolveAuthContract(undefined, { [name]: surface })[name]).toBe(surface);
  });

  it.each(FIELDS)('%s: the built-in default applies when both are silent', (name) => {
    expect(resolveAuthContract({}, {})[name]).toBe(BUILT_IN_AUTH[name]);
  });

  it('an explicit null capability (no apk_permission check) beats the surface default', () => {
    expect(resolveAuthContract({ capability: null }, SURFACE_AUTH_DEFAULTS.action).capability).toBeNull();
  });

  it('has the contract defaults: actions write, forms read, built-in no capability check and a session', () => {
    expect(resolveAuthContract({}, SURFACE_AUTH_DEFAULTS.action).capability).toBe('write');
    expect(resolveAuthContract({}, SURFACE_AUTH_DEFAULTS.form).capability).toBe('read');
    expect(BUILT_IN_AUTH).toEqual({
      capability: null,
      requires_session: true,
      requires_machine_key: false,
      requires_browser_session: false,
      allow_guest: false,
      session_write: false,
      min_user_permission: 0,
    });
  });
});

describe('authorization contract: contradictions are refused at registration', () => {
  it('names each contradiction', () => {
    expect(authContractProblems({ requires_machine_key: true, requires_browser_session: true })).toEqual([
      'requires_machine_key and requires_browser_session are mutually exclusive',
    ]);
    expect(authContractProblems({ requires_machine_key: true, allow_guest: true })).toEqual([
      'allow_guest admits the anonymous browser principal, which requires_machine_key refuses',
    ]);
    expect(authContractProblems({ requires_session: false, requires_machine_key: true })).toEqual([
      'a sessionless action takes no user credential, so it cannot require a machine key or a user permission',
    ]);
    expect(authContractProblems({ requires_session: false, min_user_permission: 5 })).toEqual([
      'a sessionless action takes no user credential, so it cannot require a machine key or a user permission',
    ]);
    // Passkey sign-in: no user yet, but only from a browser session.
    expect(authContractProblems({ requires_session: false, requires_browser_session: true })).toEqual([]);
    expect(authContractProblems({ capability: 'admin' as never })).toEqual([`capability must be 'read', 'write', 'delete' or null`]);
    expect(authContractProblems({ min_user_permission: 11 })).toEqual(['min_user_permission must be an integer from 0 to 10']);
    expect(authContractProblems({ allow_guest: true, requires_browser_session: true, session_write: true })).toEqual([]);
  });

  it('the registry refuses to build with a contradictory descriptor', () => {
    const bad = defineAction({
      name: 'bad_action',
      description: 'contradiction',
      mutates: false,
      auth: { requires_machine_key: true, requires_browser_session: true },
      run: async () => ({ data: {} }),
    });
    expect(() => new ActionRegistry([bad])).toThrow(ActionDefinitionError);
    expect(() => new ActionRegistry([bad])).toThrow('requires_machine_key and requires_browser_session are mutually exclusive');
  });

  it('the registry refuses unknown settings, bad names, bad schemas and duplicates', () => {
    const base = { description: 'x', mutates: false, run: async () => ({ data: {} }) };
    expect(() => new ActionRegistry([defineAction({ ...base, name: 'a', requires_setting: 'no_such_setting' })])).toThrow(
      "requires_setting names unknown setting 'no_such_setting'",
    );
    expect(() => new ActionRegistry([defineAction({ ...base, name: 'Bad-Name' })])).toThrow('snake_case');
    expect(() => new ActionRegistry([defineAction({ ...base, name: 'a', input: { x: { type: 'nope' as never } } })])).toThrow("unknown type 'nope'");
    const ok = defineAction({ ...base, name: 'a' });
    expect(() => new ActionRegistry([ok, ok])).toThrow('registered twice');
  });
});

function principal(credential: Credential, capability: number, usrPermission = 0): Principal {
  const user = credential === 'guest' ? null : { usr_user_id: 1, usr_email: 'a@example.com', usr_first_name: 'A', usr_last_name: null, usr_nickname: null, usr_permission: usrPermission };
  const apiKey = credential === 'machine' || credential === 'session' ? { apk_api_key_id: 1, apk_type: credential, apk_permission: capability, apk_public_key: 'k' } : null;
  return { credential, apiKey, user, capability };
}

function refusal(p: Principal, c: Partial<ResolvedAuthContract>): [number, string] | 'admitted' {
  try {
    enforceAuthContract(p, { ...BUILT_IN_AUTH, ...c });
    return 'admitted';
  } catch (e) {
    if (!(e instanceof ApiError)) throw e;
    return [e.status, e.errortype];
  }
}

describe('authorization contract: enforcement', () => {
  it('capability follows the non-monotonic matrix', () => {
    expect(refusal(principal('machine', 2), { capability: 'read' })).toEqual([403, 'AuthenticationError']);
    expect(refusal(principal('machine', 1), { capability: 'write' })).toEqual([403, 'AuthenticationError']);
    expect(refusal(principal('machine', 3), { capability: 'delete' })).toEqual([403, 'AuthenticationError']);
    expect(refusal(principal('machine', 2), { capability: 'write' })).toBe('admitted');
    expect(refusal(principal('machine', 2), { capability: null })).toBe('admitted');
    expect(refusal(principal('session', 4), { capability: 'delete' })).toBe('admitted');
  });

  it('requires_machine_key admits machine keys only', () => {
    expect(refusal(principal('machine', 4), { requires_machine_key: true })).toBe('admitted');
    expect(refusal(principal('session', 4), { requires_machine_key: true })).toEqual([403, 'AuthenticationError']);
    expect(refusal(principal('browser', 4), { requires_machine_key: true })).toEqual([403, 'AuthenticationError']);
  });

  it('requires_browser_session refuses every API key', () => {
    expect(refusal(principal('machine', 4), { requires_browser_session: true })).toEqual([403, 'AuthenticationError']);
    expect(refusal(principal('session', 4), { requires_browser_session: true })).toEqual([403, 'AuthenticationError']);
    expect(refusal(principal('browser', 4), { requires_browser_session: true })).toBe('admitted');
  });

  it('the anonymous principal is 401 unless allow_guest', () => {
    expect(refusal(principal('guest', 0), { capability: 'write' })).toEqual([401, 'AuthenticationError']);
    expect(refusal(principal('guest', 0), { capability: 'write', allow_guest: true })).toBe('admitted');
    expect(refusal(principal('guest', 0), { allow_guest: true, requires_browser_session: true })).toBe('admitted');
  });

  it('min_user_permission is a floor on usr_permission', () => {
    expect(refusal(principal('machine', 4, 5), { min_user_permission: 10 })).toEqual([403, 'AuthenticationError']);
    expect(refusal(principal('machine', 4, 10), { min_user_permission: 10 })).toBe('admitted');
    expect(refusal(principal('guest', 0), { allow_guest: true, min_user_permission: 1 })).toEqual([403, 'AuthenticationError']);
  });

  it('session_write is granted to website sessions only (signed in or guest)', () => {
    expect(enforceAuthContract(principal('browser', 4), { ...BUILT_IN_AUTH, session_write: true }).sessionWrite).toBe(true);
    expect(enforceAuthContract(principal('guest', 0), { ...BUILT_IN_AUTH, session_write: true, allow_guest: true }).sessionWrite).toBe(true);
    expect(enforceAuthContract(principal('machine', 4), { ...BUILT_IN_AUTH, session_write: true }).sessionWrite).toBe(false);
    expect(enforceAuthContract(principal('session', 4), { ...BUILT_IN_AUTH, session_write: true }).sessionWrite).toBe(false);
    expect(enforceAuthContract(principal('browser', 4), BUILT_IN_AUTH).sessionWrite).toBe(false);
  });
});
