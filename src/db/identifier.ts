const PLAIN_IDENTIFIER = /^[a-z_][a-z0-9_]*$/;

/**
 * A name spliced into SQL text (a table, column or channel, always from code) must be a plain lower-case
 * identifier; anything else throws `${refusal}: ${name}` before it reaches the database.
 */
export function assertPlainIdentifier(name: string, refusal: string): void {
  if (!PLAIN_IDENTIFIER.test(name)) throw new Error(`${refusal}: ${name}`);
}
