import type { GhostPost } from './format.js';

/** A Ghost tier as imported: its Ghost id, local name and level. */
export interface ImportedTier {
  ghostId: string;
  name: string;
  level: number;
  free: boolean;
}

export type GateOutcome =
  | { ok: true; level: number | null; widened?: { tiers: string[]; missing: string[]; level: number } }
  | { ok: false; reason: string };

/**
 * Ghost's visibility as a minimum tier level (DESIGN 16): `public` → no gate; `members` → the free tier's
 * level; `paid` → the lowest paid tier's level; `tiers` → the lowest level among the named tiers, widened
 * (and said so) when the set is not every tier from that level up, since a gate is one minimum level.
 */
export function gateFor(post: Pick<GhostPost, 'visibility'>, named: string[], tiers: ImportedTier[]): GateOutcome {
  const paid = tiers.filter((t) => !t.free);
  switch (post.visibility) {
    case 'public':
      return { ok: true, level: null };
    case 'members': {
      const free = tiers.find((t) => t.free);
      return free ? { ok: true, level: free.level } : { ok: false, reason: 'members-only, but no free tier was made' };
    }
    case 'paid':
      if (paid.length === 0) return { ok: false, reason: 'paid-members only, but the export has no paid tier' };
      return { ok: true, level: Math.min(...paid.map((t) => t.level)) };
    case 'tiers': {
      const chosen = tiers.filter((t) => named.includes(t.ghostId));
      if (chosen.length === 0) return { ok: false, reason: 'visible to specific tiers, but none of them is in the export' };
      const level = Math.min(...chosen.map((t) => t.level));
      const missing = tiers.filter((t) => t.level >= level && !chosen.includes(t)).map((t) => t.name);
      if (missing.length === 0) return { ok: true, level };
      return { ok: true, level, widened: { tiers: chosen.map((t) => t.name), missing, level } };
    }
    default:
      return { ok: false, reason: `visibility '${post.visibility}' has no tier gate here` };
  }
}
