/** SQLSTATE of a unique-constraint violation, as both drivers (PGlite and node-postgres) report it. */
export const UNIQUE_VIOLATION = '23505';

/**
 * Whether an error is a unique-constraint violation: the constraint that settled a race. With a
 * constraint name, only a violation of that constraint (by its name, or named in the message).
 */
export function isUniqueViolation(e: unknown, constraint?: string): boolean {
  const err = e as { code?: unknown; constraint?: unknown; message?: unknown } | null;
  if (err?.code !== UNIQUE_VIOLATION) return false;
  if (!constraint) return true;
  return err.constraint === constraint || String(err.message ?? '').includes(constraint);
}
