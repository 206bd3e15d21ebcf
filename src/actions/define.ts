import type { Kysely } from 'kysely';
import type { DB } from '../db/types.js';
import type { VaultWindow } from '../accounts/vault/window.js';
import type { VaultParts } from '../accounts/vault/parts.js';
import type { PasskeyVetoes } from '../accounts/passkeys/vetoes.js';
import type { DriveStorage } from '../drive/storage.js';
import type { FeatureRegistry } from '../tiers/feature-registry.js';
import type { Plugins } from '../settings/plugins.js';
import type { Principal, PrincipalUser } from '../accounts/auth/principal.js';
import type { Clock } from '../lib/clock.js';
import type { Settings } from '../settings/store.js';
import type { ModelCaches } from '../models/define.js';
import type { StoreDeps } from '../store/deps.js';
import type { AuthContract } from './auth-contract.js';
import type { FormDefinition } from './form.js';
import type { InputOf, InputSchema } from './input.js';
import type { MailMessage } from '../mail/mailer.js';

/** A file sent as multipart attachments[] to an action that accepts files. */
export interface Attachment {
  filename: string;
  mimetype: string;
  data: Buffer;
}

/** Everything an action's logic may use. Writes go through `db`, which is the request's transaction. */
export interface ActionContext<I = Record<string, unknown>> {
  name: string;
  /** Coerced, validated input; undeclared fields pass through as sent. */
  input: I;
  /** The acting user: the key's user for sessioned actions, null for sessionless ones and guests. */
  user: PrincipalUser | null;
  principal: Principal | null;
  db: Kysely<DB>;
  clock: Clock;
  settings: Settings;
  /** The server's read caches for model reads (never serving a read through the transaction). */
  caches: ModelCaches;
  /** Queues a message; it is sent only after the action's transaction commits. */
  mail(message: MailMessage): void;
  attachments: Attachment[];
  query: Record<string, string>;
  ip: string;
  /**
   * The website session's data for browser and guest principals (null for API keys and sessionless
   * calls). Changes persist only when the action's auth block declares session_write.
   */
  session: Record<string, unknown> | null;
  /** Counts a failed secret check (a wrong reset code, a wrong password) toward the failed-auth limit. */
  recordFailedAuth(): Promise<void>;
  /** The website session behind a browser or guest principal (null for API keys and keyless calls). */
  web: WebContext | null;
  /** The request's logger (never given secrets or bodies). */
  log: ActionLog;
  /** What the store reaches outside the process for (provider clients and their test seams). */
  storeDeps: StoreDeps;
  /** Which plugins are active now (e.g. the owners of upload purposes). */
  plugins: Plugins;
  /** The tier feature definitions loaded at start. */
  featureRegistry: FeatureRegistry;
  /** Where Drive keeps bytes (blob store, pending uploads' parts), opened once by the roof. */
  driveStorage: DriveStorage;
  /** What other rooms contribute to the vault: rotation re-sealers, protection level sources. */
  vaultParts: VaultParts;
  /** Consumers' vetoes on revoking a passkey or signing in with one alone. */
  passkeyVetoes: PasskeyVetoes;
}

export interface ActionLog {
  info(obj: Record<string, unknown>, msg: string): void;
  warn(obj: Record<string, unknown>, msg: string): void;
}

/** What an action may do with the caller's website session. */
export interface WebContext {
  sessionId: number;
  /** The public origin (BASE_URL), e.g. the WebAuthn relying party. */
  baseUrl: string;
  /**
   * Signs the session in as this user once the action has succeeded (and its transaction committed): the
   * session rotates like a password sign-in, with a new cookie and CSRF token.
   */
  signInAfterSuccess(userId: number): void;
  /** This session's sealed-vault window (DESIGN 10). */
  vault: VaultWindow;
}

export interface ActionResult {
  data: Record<string, unknown> | unknown[];
  message?: string;
  /** Where the web flow would have redirected; informational. */
  redirect?: string;
  /**
   * The users whose sealed content (or vault secrets, like recovery codes) the answer holds: an
   * Idempotency-Key copy of it is then stored sealed (DESIGN 10), never in the clear.
   */
  sealedFor?: number[];
}

/** The acting user's full row, as a form builder prefills from it. */
export type FormUser = Record<string, unknown> & { usr_user_id: number };

export interface FormContext {
  name: string;
  user: FormUser | null;
  query: Record<string, string>;
  db: Kysely<DB>;
  clock: Clock;
  settings: Settings;
  /** The server's read caches for model reads. */
  caches: ModelCaches;
}

export type FormBuilder = (ctx: FormContext) => FormDefinition | Promise<FormDefinition>;

/** An action module: its descriptor (what GET /actions publishes), its logic and optional form builder. */
export interface ActionDefinition<S extends InputSchema | null = InputSchema | null> {
  /** Core actions by name; plugin actions as '{plugin}/{action}'. */
  name: string;
  /**
   * The plugin a core-named action needs (the contract names it without a namespace): it exists only
   * while that plugin is active, and is otherwise the same 404 as an unknown action.
   */
  plugin?: string;
  description: string;
  /** Default true: run as the key's user. False: dispatched without key headers. */
  requires_session?: boolean;
  /** A setting name; while it is falsy the action answers 403 and discovery omits it. */
  requires_setting?: string;
  mutates: boolean;
  input?: S;
  auth?: AuthContract;
  /** Accepts multipart/form-data with attachments[]. */
  accepts_files?: boolean;
  /**
   * The answer holds a secret shown once (a share-link token, an upload token): an Idempotency-Key keeps
   * only a marker of it, never the answer, and a retry is refused with 409 (the action is not repeated).
   */
  answer_holds_secret?: boolean;
  run(ctx: ActionContext<InputOf<S>>): Promise<ActionResult>;
  form?: FormBuilder;
}

/** The published part of a definition. */
export interface ActionDescriptor {
  description: string;
  requires_session: boolean;
  requires_setting: string | null;
  mutates: boolean;
  input: InputSchema | null;
  auth: AuthContract;
  accepts_files: boolean;
  answer_holds_secret: boolean;
}

export interface Action {
  name: string;
  /** The plugin a core-named action needs; '{plugin}/{action}' names carry theirs in the name. */
  plugin?: string | null;
  descriptor: ActionDescriptor;
  run(ctx: ActionContext): Promise<ActionResult>;
  form: FormBuilder | null;
}

/** Declares an action: descriptor plus logic (plus form builder) in one value; the registry validates it. */
export function defineAction<const S extends InputSchema | null = null>(def: ActionDefinition<S>): Action {
  return {
    name: def.name,
    plugin: def.plugin ?? null,
    descriptor: {
      description: def.description,
      requires_session: def.requires_session ?? def.auth?.requires_session ?? true,
      requires_setting: def.requires_setting ?? null,
      mutates: def.mutates,
      input: def.input ?? null,
      auth: { ...def.auth, requires_session: def.requires_session ?? def.auth?.requires_session ?? true },
      accepts_files: def.accepts_files ?? false,
      answer_holds_secret: def.answer_holds_secret ?? false,
    },
    run: def.run as (ctx: ActionContext) => Promise<ActionResult>,
    form: def.form ?? null,
  };
}
