import { describe, expect, it } from 'vitest';
import { gateFor, type ImportedTier } from '../../src/store/ghost/gates.js';

// DESIGN 16: Ghost's visibility as one minimum tier level.
const free: ImportedTier = { ghostId: 'f', name: 'free', level: 1, free: true };
const bronze: ImportedTier = { ghostId: 'b', name: 'bronze', level: 10, free: false };
const silver: ImportedTier = { ghostId: 's', name: 'silver', level: 20, free: false };
const gold: ImportedTier = { ghostId: 'g', name: 'gold', level: 30, free: false };
const all = [free, bronze, silver, gold];

describe('Ghost visibility to a tier gate', () => {
  it('public is no gate; members is the free tier; paid is the lowest paid tier', () => {
    expect(gateFor({ visibility: 'public' }, [], all)).toEqual({ ok: true, level: null });
    expect(gateFor({ visibility: 'members' }, [], all)).toEqual({ ok: true, level: 1 });
    expect(gateFor({ visibility: 'paid' }, [], all)).toEqual({ ok: true, level: 10 });
  });

  it('tiers: every tier from some level up is that level exactly', () => {
    expect(gateFor({ visibility: 'tiers' }, ['g', 's'], all)).toEqual({ ok: true, level: 20 });
    expect(gateFor({ visibility: 'tiers' }, ['f', 'b', 's', 'g'], all)).toEqual({ ok: true, level: 1 });
    expect(gateFor({ visibility: 'tiers' }, ['g'], all)).toEqual({ ok: true, level: 30 });
  });

  it('tiers: a set with a gap is widened to its lowest level, naming who else reads it', () => {
    expect(gateFor({ visibility: 'tiers' }, ['b', 'g'], all)).toEqual({ ok: true, level: 10, widened: { tiers: ['bronze', 'gold'], missing: ['silver'], level: 10 } });
    expect(gateFor({ visibility: 'tiers' }, ['f', 'g'], all)).toEqual({ ok: true, level: 1, widened: { tiers: ['free', 'gold'], missing: ['bronze', 'silver'], level: 1 } });
  });

  it('refuses what it cannot gate safely, with the reason', () => {
    expect(gateFor({ visibility: 'members' }, [], [bronze])).toEqual({ ok: false, reason: 'members-only, but no free tier was made' });
    expect(gateFor({ visibility: 'paid' }, [], [free])).toEqual({ ok: false, reason: 'paid-members only, but the export has no paid tier' });
    expect(gateFor({ visibility: 'tiers' }, ['nope'], all)).toEqual({ ok: false, reason: 'visible to specific tiers, but none of them is in the export' });
    expect(gateFor({ visibility: 'status:-free' }, [], all)).toEqual({ ok: false, reason: "visibility 'status:-free' has no tier gate here" });
  });
});
