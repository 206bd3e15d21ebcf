/**
 * Tier gating: the one access check every content path uses (API reads, listings, RSS, web pages).
 * The decision is a pure function of the entity's gate, the viewer and the tier catalogue, so it is
 * the same everywhere and can be tested exhaustively.
 */

export interface EntityGate {
  /** {prefix}_tier_min_level: null or unset means no gate. */
  minLevel: number | null;
  /** {prefix}_tier_public_after_hours: early access, after which the gate lifts for everyone. */
  publicAfterHours: number | null;
  /** When the entity was published; the early-access clock starts here, else at creation. */
  publishedAt: Date | null;
  createdAt: Date | null;
}

export interface GateViewer {
  userId: number | null;
  /** usr_permission; 5 or more (staff) bypasses every gate. */
  permission: number;
  /** The viewer's tier level, null when tierless. */
  tierLevel: number | null;
}

export interface TierSummaryForGate {
  tier_id: number;
  name: string;
  display_name: string;
  tier_level: number;
}

export interface GateProduct {
  product_id: number;
  name: string;
  link: string | null;
  tier_id: number;
}

export interface TierCatalogue {
  /** Active tiers. */
  tiers: TierSummaryForGate[];
  /** Active products that grant a tier; empty when the store is inactive. */
  products: GateProduct[];
  storeActive: boolean;
  /** Setting tier_upgrade_url ('' when unset). */
  upgradeUrl: string;
}

export type GatePrompt =
  | { kind: 'url'; url: string }
  | { kind: 'products'; products: Array<Omit<GateProduct, 'tier_id'> & { tier_id: number }> }
  | { kind: 'contact'; message: string };

/** An available upgrade: a product on sale that grants a tier the viewer would need, with that tier. */
export interface UpgradeOption {
  product_id: number;
  name: string;
  link: string | null;
  tier: TierSummaryForGate;
}

/** The contract's access-check result, plus `prompt` (DESIGN: where the gate prompt sends the user). */
export interface TierAccessResult {
  allowed: boolean;
  reason: 'not_logged_in' | 'tier_too_low' | null;
  required_level: number | null;
  user_level: number | null;
  required_tier: TierSummaryForGate | null;
  upgrade_options: UpgradeOption[];
  prompt: GatePrompt | null;
}

export const CONTACT_MESSAGE = 'Contact us to upgrade your membership and see this content.';
export const STAFF_PERMISSION = 5;

function byLevel(a: TierSummaryForGate, b: TierSummaryForGate): number {
  return a.tier_level - b.tier_level || a.tier_id - b.tier_id;
}

/** Whether early access has ended, opening the entity to everyone (anonymous included). */
export function earlyAccessOver(gate: EntityGate, now: Date): boolean {
  if (gate.publicAfterHours === null || gate.publicAfterHours === undefined) return false;
  const start = gate.publishedAt ?? gate.createdAt;
  if (!start) return false;
  return now.getTime() >= start.getTime() + gate.publicAfterHours * 3600_000;
}

/** Where a gate prompt sends the user: the upgrade URL, else the store's tier products, else a contact message. */
export function promptDestination(catalogue: TierCatalogue, minLevel: number): GatePrompt {
  if (catalogue.upgradeUrl !== '') return { kind: 'url', url: catalogue.upgradeUrl };
  if (catalogue.storeActive) {
    const qualifying = new Set(catalogue.tiers.filter((t) => t.tier_level >= minLevel).map((t) => t.tier_id));
    return { kind: 'products', products: catalogue.products.filter((p) => qualifying.has(p.tier_id)) };
  }
  return { kind: 'contact', message: CONTACT_MESSAGE };
}

export function decideTierAccess(gate: EntityGate, viewer: GateViewer, catalogue: TierCatalogue, now: Date): TierAccessResult {
  const userLevel = viewer.userId === null ? null : viewer.tierLevel;
  const minLevel = gate.minLevel;
  const open = (): TierAccessResult => ({
    allowed: true,
    reason: null,
    required_level: minLevel,
    user_level: userLevel,
    required_tier: minLevel === null ? null : requiredTier(minLevel),
    upgrade_options: [],
    prompt: null,
  });
  const requiredTier = (level: number) => [...catalogue.tiers].sort(byLevel).find((t) => t.tier_level >= level) ?? null;

  if (minLevel === null || minLevel === undefined) return open();
  if (viewer.permission >= STAFF_PERMISSION) return open();
  if (earlyAccessOver(gate, now)) return open();
  if (viewer.userId !== null && userLevel !== null && userLevel >= minLevel) return open();

  // The contract's upgrade_options: the available upgrade products, each with its tier. Only products
  // on sale (active, not deleted) linked to an active tier that meets the requirement and is above the
  // viewer's; none while the store is inactive (nothing can be bought then).
  const upgradeTiers = [...catalogue.tiers].sort(byLevel).filter((t) => t.tier_level >= minLevel && (userLevel === null || t.tier_level > userLevel));
  const options: UpgradeOption[] = catalogue.storeActive
    ? upgradeTiers.flatMap((tier) =>
        catalogue.products
          .filter((p) => p.tier_id === tier.tier_id)
          .sort((a, b) => a.product_id - b.product_id)
          .map(({ tier_id: _t, ...p }) => ({ ...p, tier })),
      )
    : [];
  return {
    allowed: false,
    reason: viewer.userId === null ? 'not_logged_in' : 'tier_too_low',
    required_level: minLevel,
    user_level: userLevel,
    required_tier: requiredTier(minLevel),
    upgrade_options: options,
    prompt: promptDestination(catalogue, minLevel),
  };
}

/** Plain text of an HTML body: tags dropped, entities decoded, whitespace folded. */
export function plainText(markup: string): string {
  return markup
    .replace(/<(script|style)[^>]*>[\s\S]*?<\/\1>/gi, ' ')
    .replace(/<[^>]*>/g, ' ')
    .replace(/&nbsp;/g, ' ')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ')
    .trim();
}

/** The preview shown in place of a gated body: the first `length` characters of its plain text, or null at 0. */
export function gatePreview(body: unknown, length: number): string | null {
  if (length <= 0 || typeof body !== 'string') return null;
  return [...plainText(body)].slice(0, length).join('');
}
