import { Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler, type CompiledQuery, type DatabaseConnection, type Driver, type QueryResult } from 'kysely';
import { describe, expect, it } from 'vitest';
import type { Principal, PrincipalUser } from '../../src/accounts/auth/principal.js';
import { markSteppedUp } from '../../src/accounts/passkeys/step-up.js';
import { defineAction, type Action, type ActionContext, type WebContext } from '../../src/actions/define.js';
import { enforceGuards } from '../../src/actions/guards.js';
import { ActionDefinitionError, ActionRegistry } from '../../src/actions/registry.js';
import type { DB } from '../../src/db/types.js';
import { ApiError } from '../../src/http/errors.js';
import { TestClock } from '../../src/lib/clock.js';

/** A database that answers each query with the next scripted rows (none once the script runs out). */
function scriptedDb(...answers: Array<Record<string, unknown>[]>): Kysely<DB> {
  const connection: DatabaseConnection = {
    async executeQuery<R>(_q: CompiledQuery): Promise<QueryResult<R>> {
      return { rows: (answers.shift() ?? []) as R[] };
    },
    async *streamQuery() {},
  };
  const driver: Driver = {
    async init() {},
    async acquireConnection() { return connection; },
    async beginTransaction() {},
    async commitTransaction() {},
    async rollbackTransaction() {},
    async releaseConnection() {},
    async destroy() {},
  };
  return new Kysely<DB>({
    dialect: {
      createAdapter: () => new PostgresAdapter(),
      createDriver: () => driver,
      createIntrospector: (db) => new PostgresIntrospector(db),
      createQueryCompiler: () => new PostgresQueryCompiler(),
    },
  });
}

const clock = new TestClock(new Date('2026-01-01T00:00:00Z'));
const ME: PrincipalUser = { usr_user_id: 7, usr_email: 'me@example.com', usr_first_name: 'Me', usr_last_name: null, usr_nickname: null, usr_permission: 0 };
const VAULT_ROW = { uev_user_encryption_vault_id: 3, uev_usr_user_id: 7, uev_public_key: 'AAAA', uev_key_generation: 1, uev_window_epoch: 0 };
const settings = { int: () => 300, bool: () => false, get: () => null } as unknown as ActionContext['settings'];

function webWith(unsealed: unknown): WebContext {
  return { sessionId: 1, baseUrl: 'http://localhost', signInAfterSuccess() {}, vault: { unsealFor: async () => unsealed } as unknown as WebContext['vault'] };
}

function context(over: Partial<ActionContext> = {}): ActionContext {
  return {
    name: 't',
    input: {},
    user: ME,
    principal: { credential: 'browser', apiKey: null, user: ME, capability: 4 } satisfies Principal,
    db: scriptedDb(),
    clock,
    settings,
    baseUrl: 'https://gatehouse.example',
    mail() {},
    attachments: [],
    query: {},
    ip: '127.0.0.1',
    session: {},
    recordFailedAuth: async () => {},
    web: webWith(null),
    log: { info() {}, warn() {} },
    storeDeps: {} as ActionContext['storeDeps'],
    caches: {} as ActionContext['caches'],
    plugins: {} as ActionContext['plugins'],
    featureRegistry: {} as ActionContext['featureRegistry'],
    driveStorage: {} as ActionContext['driveStorage'],
    vaultParts: { resealers: [], levelSources: [] } as unknown as ActionContext['vaultParts'],
    passkeyVetoes: { revoke: [], signIn: [] } as unknown as ActionContext['passkeyVetoes'],
    ...over,
  };
}

async function refusal(action: Action, ctx: ActionContext) {
  try {
    await enforceGuards(action.guards, ctx);
  } catch (e) {
    expect(e).toBeInstanceOf(ApiError);
    const err = e as ApiError;
    return { status: err.status, errortype: err.errortype, message: err.message, data: err.data };
  }
  throw new Error('the guards let the call through');
}

const run = async () => ({ data: {} });
const BROWSER = { requires_browser_session: true } as const;

describe('the guard stage', () => {
  it('acting user: a sessioned action without a user is refused with 401 Sign in required', async () => {
    const action = defineAction({ name: 'a', description: 'a', mutates: false, run });
    expect(action.guards.acting_user).toBe(true);
    expect(await refusal(action, context({ user: null }))).toEqual({ status: 401, errortype: 'AuthenticationError', message: 'Sign in required', data: {} });
  });

  it('acting user is implied neither for a sessionless action nor for one that admits guests', () => {
    expect(defineAction({ name: 'a', description: 'a', mutates: false, requires_session: false, run }).guards.acting_user).toBe(false);
    expect(defineAction({ name: 'a', description: 'a', mutates: false, auth: { allow_guest: true }, run }).guards.acting_user).toBe(false);
  });

  it('browser: requires_browser_session without a website session is refused with 403', async () => {
    const action = defineAction({ name: 'a', description: 'a', mutates: false, auth: BROWSER, run });
    expect(await refusal(action, context({ web: null }))).toEqual({
      status: 403, errortype: 'AuthenticationError', message: 'This action requires a browser session; API keys are refused', data: {},
    });
  });

  it('login_as: a staff member signed in as a member is refused with 422 login_as', async () => {
    const action = defineAction({ name: 'a', description: 'a', mutates: true, auth: BROWSER, login_as: 'Passkeys cannot be revoked', step_up: 'passkey', run });
    const principal: Principal = { credential: 'browser', apiKey: null, user: ME, capability: 4, loginAsBy: 1 };
    // Refused before the step-up is looked at.
    expect(await refusal(action, context({ principal }))).toEqual({
      status: 422, errortype: 'ActionError', message: 'Passkeys cannot be revoked while signed in on behalf of a member', data: { reason: 'login_as' },
    });
  });

  it('step_up passkey: no recent step-up is 422 stepup_required; a recent one passes', async () => {
    const action = defineAction({ name: 'a', description: 'a', mutates: true, auth: BROWSER, step_up: 'passkey', run });
    expect(await refusal(action, context())).toEqual({ status: 422, errortype: 'ActionError', message: 'Confirm with one of your passkeys first', data: { reason: 'stepup_required' } });
    const session = {};
    markSteppedUp(session, ME.usr_user_id, clock);
    await expect(enforceGuards(action.guards, context({ session }))).resolves.toMatchObject({ user: ME });
  });

  it('vault set_up: no vault is 422 vault_not_set_up, before the step-up', async () => {
    const action = defineAction({ name: 'a', description: 'a', mutates: true, auth: BROWSER, input: { password: { type: 'password' } }, vault: 'set_up', step_up: 'passkey_or_password', run });
    expect(await refusal(action, context({ db: scriptedDb([]) }))).toEqual({ status: 422, errortype: 'ActionError', message: 'You have not set up a vault', data: { reason: 'vault_not_set_up' } });
  });

  it('step_up passkey_or_password: an account with a passkey and no recent step-up is 422 stepup_required, before the unlock check', async () => {
    const action = defineAction({ name: 'a', description: 'a', mutates: true, auth: BROWSER, input: { password: { type: 'password' } }, vault: 'unlocked', step_up: 'passkey_or_password', run });
    const db = scriptedDb([VAULT_ROW], [{ pky_passkey_id: 1 }]);
    expect(await refusal(action, context({ db }))).toEqual({ status: 422, errortype: 'ActionError', message: 'Confirm with one of your passkeys first', data: { reason: 'stepup_required' } });
  });

  it('vault unlocked: a closed window is 422 vault_locked; an open one is handed to run with the vault', async () => {
    const action = defineAction({ name: 'a', description: 'a', mutates: true, auth: BROWSER, vault: 'unlocked', run });
    expect(await refusal(action, context({ db: scriptedDb([VAULT_ROW]) }))).toEqual({ status: 422, errortype: 'ActionError', message: 'Unlock your vault first', data: { reason: 'vault_locked' } });
    const open = { vault: { id: 3 }, secretKey: Buffer.alloc(32) };
    const guarded = await enforceGuards(action.guards, context({ db: scriptedDb([VAULT_ROW]), web: webWith(open) }));
    expect(guarded.vault).toMatchObject({ id: 3, userId: 7, generation: 1 });
    expect(guarded.openVault).toBe(open);
  });

  it('drive_item: an item the caller cannot reach is 422 not_found of its kind', async () => {
    const action = defineAction({ name: 'a', description: 'a', mutates: false, input: { file_id: { type: 'int', required: true } }, drive_item: { need: 'read', of: 'file' }, run });
    expect(await refusal(action, context({ input: { file_id: 5 } }))).toEqual({ status: 422, errortype: 'ActionError', message: 'That file does not exist', data: { reason: 'not_found' } });
  });

  it('drive_item of a file or folder: neither or both given is the 422 of targetOf', async () => {
    const action = defineAction({ name: 'a', description: 'a', mutates: false, input: { file_id: { type: 'int' }, folder_id: { type: 'int' } }, drive_item: { need: 'edit', of: 'file_or_folder' }, run });
    const err = await refusal(action, context({ input: {} }));
    expect(err).toMatchObject({ status: 422, errortype: 'ValidationError' });
  });

  it('guards are never published in the descriptor', () => {
    const action = defineAction({ name: 'a', description: 'a', mutates: true, auth: BROWSER, vault: 'unlocked', login_as: 'No', run });
    expect(Object.keys(action.descriptor).sort()).toEqual(['accepts_files', 'answer_holds_secret', 'auth', 'description', 'input', 'mutates', 'requires_session', 'requires_setting']);
  });
});

describe('guards that contradict the auth contract or the input are refused at registration', () => {
  const refused = (action: Action) => () => new ActionRegistry([action]);
  it('a user guard on a sessionless action or one that admits guests', () => {
    expect(refused(defineAction({ name: 'a', description: 'a', mutates: true, requires_session: false, auth: BROWSER, step_up: 'passkey', run }))).toThrow(ActionDefinitionError);
    expect(refused(defineAction({ name: 'a', description: 'a', mutates: true, auth: { allow_guest: true, requires_browser_session: true }, vault: 'set_up', run }))).toThrow(/vault needs a signed-in user/);
  });
  it("vault 'unlocked' without requires_browser_session", () => {
    expect(refused(defineAction({ name: 'a', description: 'a', mutates: true, vault: 'unlocked', run }))).toThrow(/requires_browser_session/);
  });
  it("step_up 'passkey_or_password' without a password field", () => {
    expect(refused(defineAction({ name: 'a', description: 'a', mutates: true, auth: BROWSER, step_up: 'passkey_or_password', run }))).toThrow(/password input field/);
  });
  it('drive_item without the input fields it reads', () => {
    expect(refused(defineAction({ name: 'a', description: 'a', mutates: true, drive_item: { need: 'edit', of: 'file' }, run }))).toThrow(/required file_id/);
    expect(refused(defineAction({ name: 'a', description: 'a', mutates: true, input: { file_id: { type: 'int' } }, drive_item: { need: 'edit', of: 'file_or_folder' }, run }))).toThrow(/file_id and folder_id/);
  });
  it('every core action registers with its guards', async () => {
    const { actionRegistry } = await import('../../src/actions/index.js');
    expect(actionRegistry.available({ isActive: () => true }).length).toBeGreaterThan(50);
  });
});
