/** The usage line of every command, shown on bad input and by `gatehouse help`. */
export const USAGE = {
  serve: ['gatehouse serve [--dev]'],
  migrate: ['gatehouse migrate'],
  user: ['gatehouse user create --email E --password P [--permission N] [--first-name F] [--last-name L]'],
  member: ['gatehouse member import FILE [--dry-run]', 'gatehouse member export [--out FILE]'],
  key: [
    'gatehouse key create --user-id N --permission 1..4 [--ip-restriction "ip,ip"] [--start-time T] [--expires-time T] [--name S] [--inactive]',
    'gatehouse key revoke --api-key-id N',
  ],
  setting: ['gatehouse setting list [--table]', 'gatehouse setting get NAME', 'gatehouse setting set NAME VALUE'],
  plugin: ['gatehouse plugin list', 'gatehouse plugin enable NAME', 'gatehouse plugin disable NAME'],
  task: ['gatehouse task run NAME|all'],
  tier: ['gatehouse tier list', 'gatehouse tier assign --user-id N --tier NAME|none', 'gatehouse tier audit'],
  backup: ['gatehouse backup create', 'gatehouse backup restore FILE'],
  import: ['gatehouse import ghost EXPORT.json'],
  export: ['gatehouse export content [--out FILE]'],
  store: ['gatehouse store unresolved', 'gatehouse store replay --event-id ID [--source SOURCE]', 'gatehouse store reconcile [--user-id N] [--source SOURCE] [--dry-run]'],
  webhook: [
    'gatehouse webhook list',
    'gatehouse webhook create --url URL [--description S] [--event-type TYPE ...] [--disabled]',
    'gatehouse webhook redeliver --event-id ID [--endpoint-id N] | --endpoint-id N --since T',
  ],
} as const;

/** The usage of a group as one message: `usage: first\n       second`. */
export function groupUsage(lines: readonly string[]): string {
  return `usage: ${lines.join('\n       ')}`;
}
