import { describe, expect, it } from 'vitest';
import { CONTACT_MESSAGE, decideTierAccess, gatePreview, promptDestination, type EntityGate, type GateViewer, type TierCatalogue } from '../../src/tiers/gating.js';

const NOW = new Date('2026-06-01T12:00:00Z');
const basic = { tier_id: 1, name: 'basic', display_name: 'Basic', tier_level: 10 };
const premium = { tier_id: 2, name: 'premium', display_name: 'Premium', tier_level: 20 };
const pro = { tier_id: 3, name: 'pro', display_name: 'Pro', tier_level: 30 };
const products = [
  { product_id: 11, name: 'Basic monthly', link: 'basic-monthly', tier_id: 1 },
  { product_id: 21, name: 'Premium monthly', link: 'premium-monthly', tier_id: 2 },
  { product_id: 31, name: 'Pro yearly', link: 'pro-yearly', tier_id: 3 },
];
const catalogue: TierCatalogue = { tiers: [pro, basic, premium], products, storeActive: true, upgradeUrl: '' };

const viewers: Record<string, GateViewer> = {
  anonymous: { userId: null, permission: 0, tierLevel: null },
  tierless: { userId: 1, permission: 0, tierLevel: null },
  lower: { userId: 2, permission: 0, tierLevel: 10 },
  equal: { userId: 3, permission: 0, tierLevel: 20 },
  higher: { userId: 4, permission: 0, tierLevel: 30 },
  staff: { userId: 5, permission: 5, tierLevel: null },
};

const hoursAgo = (h: number) => new Date(NOW.getTime() - h * 3600_000);
const entities: Record<string, EntityGate> = {
  'no gate': { minLevel: null, publicAfterHours: null, publishedAt: hoursAgo(1), createdAt: hoursAgo(2) },
  gated: { minLevel: 20, publicAfterHours: null, publishedAt: hoursAgo(1), createdAt: hoursAgo(2) },
  'gated, inside its early-access window': { minLevel: 20, publicAfterHours: 48, publishedAt: hoursAgo(47), createdAt: hoursAgo(100) },
  'gated, early access over': { minLevel: 20, publicAfterHours: 48, publishedAt: hoursAgo(48), createdAt: hoursAgo(100) },
  'gated, early access counted from creation when unpublished time is unset': { minLevel: 20, publicAfterHours: 48, publishedAt: null, createdAt: hoursAgo(49) },
};

type Expect = { allowed: boolean; reason: 'not_logged_in' | 'tier_too_low' | null; options: number[] };
const open: Expect = { allowed: true, reason: null, options: [] };
const expected: Record<string, Record<string, Expect>> = {
  'no gate': { anonymous: open, tierless: open, lower: open, equal: open, higher: open, staff: open },
  gated: {
    anonymous: { allowed: false, reason: 'not_logged_in', options: [2, 3] },
    tierless: { allowed: false, reason: 'tier_too_low', options: [2, 3] },
    lower: { allowed: false, reason: 'tier_too_low', options: [2, 3] },
    equal: open,
    higher: open,
    staff: open,
  },
};
expected['gated, inside its early-access window'] = expected.gated!;
expected['gated, early access over'] = expected['no gate']!;
expected['gated, early access counted from creation when unpublished time is unset'] = expected['no gate']!;

describe('checkTierAccess: viewer kinds × entity states', () => {
  for (const [entityName, gate] of Object.entries(entities)) {
    for (const [viewerName, viewer] of Object.entries(viewers)) {
      const want = expected[entityName]![viewerName]!;
      it(`${entityName} — ${viewerName} viewer: ${want.allowed ? 'allowed' : want.reason}`, () => {
        const r = decideTierAccess(gate, viewer, catalogue, NOW);
        expect(Object.keys(r).sort()).toEqual(['allowed', 'prompt', 'reason', 'required_level', 'required_tier', 'upgrade_options', 'user_level']);
        expect(r.allowed).toBe(want.allowed);
        expect(r.reason).toBe(want.reason);
        expect(r.required_level).toBe(gate.minLevel);
        expect(r.user_level).toBe(viewer.userId === null ? null : viewer.tierLevel);
        expect(r.required_tier).toEqual(gate.minLevel === null ? null : premium);
        expect(r.upgrade_options.map((o) => o.tier.tier_id)).toEqual(want.options);
        if (!want.allowed) {
          expect(r.upgrade_options).toEqual([
            { product_id: 21, name: 'Premium monthly', link: 'premium-monthly', tier: premium },
            { product_id: 31, name: 'Pro yearly', link: 'pro-yearly', tier: pro },
          ]);
          expect(r.prompt).toEqual({ kind: 'products', products: products.filter((p) => p.tier_id >= 2) });
        } else {
          expect(r.prompt).toBeNull();
        }
      });
    }
  }

  it('picks the lowest active tier meeting the requirement, even between declared levels', () => {
    const r = decideTierAccess({ minLevel: 15, publicAfterHours: null, publishedAt: null, createdAt: null }, viewers.lower!, catalogue, NOW);
    expect(r.required_tier).toEqual(premium);
    expect(r.upgrade_options.map((o) => o.tier.name)).toEqual(['premium', 'pro']);
  });

  it('upgrade_options lists products, each with its tier: every product of a qualifying tier, none of a tier without products', () => {
    const more = [...products, { product_id: 22, name: 'Premium yearly', link: 'premium-yearly', tier_id: 2 }, { product_id: 12, name: 'Basic yearly', link: null, tier_id: 1 }];
    const onlyPremium = { ...catalogue, products: more.filter((p) => p.tier_id !== 3) };
    const r = decideTierAccess({ minLevel: 20, publicAfterHours: null, publishedAt: null, createdAt: null }, viewers.lower!, onlyPremium, NOW);
    expect(r.upgrade_options).toEqual([
      { product_id: 21, name: 'Premium monthly', link: 'premium-monthly', tier: premium },
      { product_id: 22, name: 'Premium yearly', link: 'premium-yearly', tier: premium },
    ]);
  });

  it('upgrade_options is empty while the store is inactive, even with products in the catalogue', () => {
    const gate = { minLevel: 20, publicAfterHours: null, publishedAt: null, createdAt: null };
    expect(decideTierAccess(gate, viewers.tierless!, { ...catalogue, storeActive: false }, NOW).upgrade_options).toEqual([]);
    expect(decideTierAccess(gate, viewers.tierless!, { ...catalogue, storeActive: false, products: [] }, NOW).upgrade_options).toEqual([]);
  });

  it('a requirement above every tier has no required tier and no upgrade options', () => {
    const none = decideTierAccess({ minLevel: 99, publicAfterHours: null, publishedAt: null, createdAt: null }, viewers.higher!, catalogue, NOW);
    expect(none).toMatchObject({ allowed: false, reason: 'tier_too_low', required_tier: null, upgrade_options: [] });
  });
});

describe('the gate prompt destination', () => {
  it('is tier_upgrade_url when set', () => {
    expect(promptDestination({ ...catalogue, upgradeUrl: 'https://x.example/upgrade' }, 20)).toEqual({ kind: 'url', url: 'https://x.example/upgrade' });
  });
  it('is the store’s tier-granting products when the URL is empty and the store is active', () => {
    expect(promptDestination(catalogue, 30)).toEqual({ kind: 'products', products: [products[2]] });
  });
  it('is a contact-us message when the URL is empty and the store is inactive', () => {
    expect(promptDestination({ ...catalogue, storeActive: false, products: [] }, 20)).toEqual({ kind: 'contact', message: CONTACT_MESSAGE });
  });
});

describe('the preview', () => {
  it('is null at length 0 and plain text otherwise', () => {
    expect(gatePreview('<p>Hello <b>world</b></p>', 0)).toBeNull();
    expect(gatePreview('<p>Hello <b>world</b> &amp; more</p>', 13)).toBe('Hello world &');
    expect(gatePreview('<script>alert(1)</script><p>Safe</p>', 10)).toBe('Safe');
  });
});
