// node-postgres's value conversion (not in @types/pg): what the PostgreSQL path sends for a JS value.
declare module 'pg/lib/utils.js' {
  const utils: { prepareValue(value: unknown): unknown };
  export default utils;
}
