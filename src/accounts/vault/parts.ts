import type { ContentResealer } from './rotation.js';
import type { ProtectionLevelSource } from './window.js';

/**
 * What other rooms contribute to the vault, composed once by the roof (src/boot/compose.ts) and handed
 * down: nothing joins these lists by being imported.
 */
export interface VaultParts {
  /** Run in a rotation's transaction, in this order: Drive's, then each plugin's. */
  resealers: ContentResealer[];
  /** The levels a user's protected content has (a plugin's only while it is active); the highest decides the window caps. */
  levelSources: ProtectionLevelSource[];
}
