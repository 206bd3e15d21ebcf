import { setTimeout as delay } from 'node:timers/promises';
import { sql, type Kysely } from 'kysely';
import type { VaultParts } from '../../src/accounts/vault/parts.js';
import type { DB } from '../../src/db/types.js';
import { addForTest } from './composed.js';
import { onPostgres } from './database.js';

// Interleaving points for concurrency tests: a gate a test opens when it chooses, a vault rotation held
// open inside its transaction, and a wait for "this work is now blocked on a lock (or done)".

export interface Gate {
  open: () => void;
  opened: Promise<void>;
}

export function gate(): Gate {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

/**
 * Holds the next rotation of this user's vault inside its transaction (in this app), after the re-sealers
 * listed before it ran and before it switches the key: `reached` resolves there, and it goes on once `release`
 * (or `remove`) is called.
 */
export function holdRotation(services: { vaultParts: VaultParts }, userId: number): { reached: Promise<void>; release: () => void; remove: () => void } {
  const reached = gate();
  const release = gate();
  const remove = addForTest(services.vaultParts.resealers, async (_db, input) => {
    if (input.userId !== userId) return;
    reached.open();
    await release.opened;
  });
  // Removing it lets a held rotation go on too, so a failed test never leaves a transaction open.
  return { reached: reached.opened, release: release.open, remove: () => (release.open(), remove()) };
}

/**
 * Waits until every one of `work` has settled, or (PostgreSQL) until at least `waiters` statements of this
 * test's database wait for a lock: the moment a test lets the lock's holder go on. On PGlite a
 * transaction holds the one connection to its end, so work queued behind it cannot start at all: a few
 * turns of the event loop are given and the test goes on.
 */
export async function settledOrWaiting(db: Kysely<DB>, work: Promise<unknown>[], waiters = 1): Promise<'settled' | 'waiting'> {
  let settled = false;
  void Promise.allSettled(work).then(() => (settled = true));
  if (!onPostgres) {
    for (let i = 0; i < 20 && !settled; i++) await new Promise((r) => setImmediate(r));
    return settled ? 'settled' : 'waiting';
  }
  for (let i = 0; i < 1000; i++) {
    if (settled) return 'settled';
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`.execute(db);
    if (rows[0]!.n >= waiters) return 'waiting';
    await delay(10);
  }
  throw new Error('the work neither settled nor waited for a lock within 10 s');
}
