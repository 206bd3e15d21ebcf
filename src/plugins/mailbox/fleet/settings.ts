import type { SettingDefinition } from '../../../settings/definitions.js';

export const fleetSettings: SettingDefinition[] = [
  { name: 'mailbox_fleet_grace_hours', type: 'integer', default: 72, min: 0, max: 24 * 365, description: 'Hours a fleet slot whose tier lost mailbox_fleet_slot keeps working before the re-check suspends it' },
];
