/** The operator named no store event that can be replayed (the CLI exits 2). Kept light: the CLI loads it on start. */
export class StoreReplayInputError extends Error {}

/** A replay ran but could not apply its event (the CLI exits 1): the store is inactive, or the cause is not fixed. */
export class StoreReplayError extends Error {}
