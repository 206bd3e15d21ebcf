import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.js';
import type { Clock } from '../../lib/clock.js';
import { aeadOpen, aeadSeal, hkdf } from './crypto.js';
import { vaultOf, type Vault } from './vaults.js';
import type { VaultWindowStore } from './window-store.js';

/** 30 minutes without a content decrypt closes any window (DESIGN 10). */
export const DECRYPT_IDLE_MS = 30 * 60_000;
/** More than 300 s without a heartbeat closes it. */
export const HEARTBEAT_GRACE_MS = 300_000;

export type ProtectionLevel = 'standard' | 'private' | 'fortress';
const LEVEL_RANK: Record<ProtectionLevel, number> = { standard: 0, private: 1, fortress: 2 };

/** The caps of a level; an unknown level gets fortress caps. */
export function capsOf(level: string): { idleMs: number | null; absoluteMs: number | null } {
  if (level === 'standard') return { idleMs: null, absoluteMs: null };
  if (level === 'private') return { idleMs: null, absoluteMs: 7 * 24 * 3600_000 };
  return { idleMs: 2 * 3600_000, absoluteMs: 24 * 3600_000 };
}

/**
 * Consumers that hold protected content with a level (the mailbox's security level) report the levels a
 * user has; the highest decides the window caps. No source: standard.
 */
export type ProtectionLevelSource = (db: Kysely<DB>, userId: number) => Promise<string[]>;

export async function protectionLevelOf(sources: readonly ProtectionLevelSource[], db: Kysely<DB>, userId: number): Promise<string> {
  let best = 'standard';
  let bestRank = 0;
  for (const source of sources) {
    for (const level of await source(db, userId)) {
      const rank = Object.hasOwn(LEVEL_RANK, level) ? LEVEL_RANK[level as ProtectionLevel] : 3;
      if (rank > bestRank) [best, bestRank] = [level, rank];
    }
  }
  return best;
}

/** What a window holds; all of it is sealed under the session token's key before it leaves the process. */
interface WindowState {
  user_id: number;
  generation: number;
  epoch: number;
  secret: string;
  ip: string;
  opened_ms: number;
  last_decrypt_ms: number;
  last_heartbeat_ms: number;
  idle_ms: number | null;
  absolute_ms: number | null;
}

/** An open window: the vault secret of this generation, usable for this request. */
export interface OpenVault {
  vault: Vault;
  secretKey: Buffer;
}

export interface WindowTimes {
  idle_expires_time: Date;
  absolute_expires_time: Date | null;
}

/** The node's window service: per request, `forSession` gives the handle of the caller's session. */
export class VaultWindows {
  constructor(
    readonly store: VaultWindowStore,
    private readonly clock: Clock,
    /** Where a window's caps come from (composed by the roof: each active plugin's source). */
    private readonly levelSources: readonly ProtectionLevelSource[],
  ) {}

  forSession(sessionToken: string, ip: string): VaultWindow {
    return new VaultWindow(this.store, this.clock, this.levelSources, sessionToken, ip);
  }
}

/**
 * One browser session's window. The store key and the sealing key are both derived from the session's
 * token, which only the visitor's cookie carries: a copy of the store or the database opens nothing, and
 * any node serving this session's request can open it.
 */
export class VaultWindow {
  private readonly key: string;
  private readonly sealingKey: Buffer;
  private cached: { state: WindowState; vault: Vault } | null | undefined;
  /** Whether this request found the window closed because the vault was rotated since it opened. */
  closedByRotation = false;

  constructor(
    private readonly store: VaultWindowStore,
    private readonly clock: Clock,
    private readonly levelSources: readonly ProtectionLevelSource[],
    sessionToken: string,
    private readonly ip: string,
  ) {
    const token = Buffer.from(sessionToken, 'utf8');
    this.key = hkdf(token, Buffer.from('gatehouse vault window'), 'store key').toString('hex');
    this.sealingKey = hkdf(token, Buffer.from('gatehouse vault window'), 'sealing key');
  }

  private seal(state: WindowState): string {
    return aeadSeal(this.sealingKey, Buffer.from(JSON.stringify(state), 'utf8'), `uvw:${this.key}`);
  }

  /**
   * Records a use of the open window (a decrypt, a heartbeat). False when it was closed since this request
   * read it (a lock in a concurrent request): it stays closed, and the caller answers as locked.
   */
  private async touch(db: Kysely<DB>, state: WindowState): Promise<boolean> {
    if (await this.store.replace(this.key, this.seal(state), this.endOf(state), db)) return true;
    this.cached = null;
    return false;
  }

  /** The latest moment the window can still be open; the store forgets it then. */
  private endOf(s: WindowState): number {
    const ends = [s.last_decrypt_ms + DECRYPT_IDLE_MS, s.last_heartbeat_ms + HEARTBEAT_GRACE_MS];
    if (s.idle_ms !== null) ends.push(s.last_decrypt_ms + s.idle_ms);
    if (s.absolute_ms !== null) ends.push(s.opened_ms + s.absolute_ms);
    return Math.min(...ends);
  }

  private async read(db: Kysely<DB>): Promise<WindowState | null> {
    const sealed = await this.store.get(this.key, db);
    if (!sealed) return null;
    const plain = aeadOpen(this.sealingKey, sealed, `uvw:${this.key}`);
    return plain ? (JSON.parse(plain.toString('utf8')) as WindowState) : null;
  }

  /** Opens the window after a successful unlock (or setup, or rotation): replaces any earlier one. */
  async openWith(db: Kysely<DB>, vault: Vault, secretKey: Buffer): Promise<void> {
    const now = this.clock.nowMs();
    const caps = capsOf(await protectionLevelOf(this.levelSources, db, vault.userId));
    const state: WindowState = {
      user_id: vault.userId,
      generation: vault.generation,
      epoch: vault.windowEpoch,
      secret: secretKey.toString('base64url'),
      ip: this.ip,
      opened_ms: now,
      last_decrypt_ms: now,
      last_heartbeat_ms: now,
      idle_ms: caps.idleMs,
      absolute_ms: caps.absoluteMs,
    };
    await this.store.put(this.key, this.seal(state), this.endOf(state), db);
    this.cached = { state, vault };
  }

  async close(db: Kysely<DB>): Promise<void> {
    this.cached = null;
    await this.store.delete(this.key, db);
  }

  /**
   * The window's state if it is open for this user now: every closing rule is checked here (caps, the
   * decrypt idle, the heartbeat grace, a changed client address, a newer epoch or key generation), and a
   * window found closed is deleted.
   */
  private async current(db: Kysely<DB>, userId: number): Promise<{ state: WindowState; vault: Vault } | null> {
    if (this.cached !== undefined) {
      if (this.cached && this.cached.state.user_id === userId && this.isOpen(this.cached.state, this.cached.vault)) return this.cached;
      if (this.cached === null) return null;
    }
    const state = await this.read(db);
    if (!state) {
      this.cached = null;
      return null;
    }
    const vault = await vaultOf(db, state.user_id);
    if (state.user_id !== userId || !vault || !this.isOpen(state, vault)) {
      if (vault && state.user_id === userId && state.generation < vault.generation) this.closedByRotation = true;
      await this.close(db);
      return null;
    }
    this.cached = { state, vault };
    return this.cached;
  }

  private isOpen(s: WindowState, vault: Vault): boolean {
    const now = this.clock.nowMs();
    return now < this.endOf(s) && s.ip === this.ip && s.epoch === vault.windowEpoch && s.generation === vault.generation;
  }

  /** Whether this user's window is open (no decrypt: status and heartbeat use this). */
  async isOpenFor(db: Kysely<DB>, userId: number): Promise<boolean> {
    return (await this.current(db, userId)) !== null;
  }

  async times(db: Kysely<DB>, userId: number): Promise<WindowTimes | null> {
    const c = await this.current(db, userId);
    if (!c) return null;
    const s = c.state;
    const idleEnds = [s.last_decrypt_ms + DECRYPT_IDLE_MS, ...(s.idle_ms !== null ? [s.last_decrypt_ms + s.idle_ms] : [])];
    return {
      idle_expires_time: new Date(Math.min(...idleEnds)),
      absolute_expires_time: s.absolute_ms !== null ? new Date(s.opened_ms + s.absolute_ms) : null,
    };
  }

  /** The secret key for a content decrypt: counts as use (resets the decrypt idle); null when locked. */
  async unsealFor(db: Kysely<DB>, userId: number): Promise<OpenVault | null> {
    const c = await this.current(db, userId);
    if (!c) return null;
    const now = this.clock.nowMs();
    if (c.state.last_decrypt_ms !== now) {
      c.state.last_decrypt_ms = now;
      if (!(await this.touch(db, c.state))) return null;
    }
    return { vault: c.vault, secretKey: Buffer.from(c.state.secret, 'base64url') };
  }

  /** Presence: records the heartbeat without extending any cap; false once no window is open. */
  async heartbeat(db: Kysely<DB>, userId: number): Promise<boolean> {
    const c = await this.current(db, userId);
    if (!c) return false;
    c.state.last_heartbeat_ms = this.clock.nowMs();
    return this.touch(db, c.state);
  }
}
