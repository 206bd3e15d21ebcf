/**
 * Whether a statement's plan may be kept across executions (a named prepared statement): not when it
 * selects `*` (or `table.*`), because a kept plan of one fails ("cached plan must not change result
 * type") once a migration adds a column. `count(*)` is no such select.
 */
export function planMayBeKept(text: string): boolean {
  return !/(^|[\s,(])(\*|"?\w+"?\.\*)/.test(text.replace(/count\(\*\)/gi, ''));
}
