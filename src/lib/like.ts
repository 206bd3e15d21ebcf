/**
 * A LIKE pattern that matches `text` anywhere, case-folded to lower case: the user's own `%`, `_` and `\`
 * are escaped (backslash is LIKE's default escape character on PostgreSQL), so a search for 'a_b' matches
 * only that text. Compare it with lower(column); the pattern is always passed as a parameter.
 */
export const likeContains = (text: string): string => `%${text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
