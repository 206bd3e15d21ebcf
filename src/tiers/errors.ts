/**
 * A refusal of tier input (unknown user or tier, bad field, duplicate tier). The CRUD hooks turn it into a
 * 400 TransactionError, the CLI into exit status 2; `fields` names each bad field or feature key.
 */
export class TierInputError extends Error {
  constructor(message: string, readonly fields: Record<string, string> = {}) {
    super(message);
    this.name = 'TierInputError';
  }
}

export const TIER_EXISTS = 'Tier already exists';

