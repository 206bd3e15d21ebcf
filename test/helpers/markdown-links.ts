import path from 'node:path';

export interface LinkProblem {
  file: string;
  target: string;
  problem: string;
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
export function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of withoutFences(markdown).split('\n')) {
    const m = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const base = m[1]!
      .replace(/`/g, '')
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .toLowerCase()
      .replace(/[^\p{L}\p{N} _-]/gu, '')
      .replace(/ /g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

function withoutFences(markdown: string): string {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');
}

/** Fenced code blocks and inline code spans blanked out: a link-like text inside code is not a link. */
function withoutCode(markdown: string): string {
  return withoutFences(markdown).replace(/`[^`\n]*`/g, '');
}

/** Every link target of a Markdown text: inline links and images, reference definitions, HTML href/src. */
export function linkTargets(markdown: string): string[] {
  const text = withoutCode(markdown);
  const targets: string[] = [];
  for (const m of text.matchAll(/!?\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) targets.push(m[1]!);
  for (const m of text.matchAll(/^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+"[^"]*")?\s*$/gm)) targets.push(m[1]!);
  for (const m of text.matchAll(/\b(?:href|src)\s*=\s*"([^"]+)"/g)) targets.push(m[1]!);
  return targets;
}

export interface Repository {
  root: string;
  /** Whether a repository-relative path is a file a fresh clone has ('/'-separated). */
  hasFile(relative: string): boolean;
  /** Whether it is a directory of such files. */
  hasDirectory(relative: string): boolean;
  read(relative: string): string;
}

/**
 * The dead relative links of the given Markdown files (repository-relative paths): a target outside the
 * repository, a file a fresh clone does not have, or an anchor no heading of the target file makes.
 * Links with a scheme (https:, mailto:) are not followed.
 */
export function deadRelativeLinks(repo: Repository, files: string[]): LinkProblem[] {
  const problems: LinkProblem[] = [];
  for (const file of files) {
    for (const target of linkTargets(repo.read(file))) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//')) continue;
      const [rawPath, anchor] = target.split('#', 2) as [string, string | undefined];
      const decoded = decodeURIComponent(rawPath);
      const resolved = decoded === '' ? file : path.posix.normalize(path.posix.join(path.posix.dirname(file), decoded));
      if (resolved.startsWith('../') || resolved === '..' || path.posix.isAbsolute(decoded)) {
        problems.push({ file, target, problem: 'points outside the repository' });
        continue;
      }
      const isDir = resolved === '.' || repo.hasDirectory(resolved.replace(/\/$/, ''));
      if (!isDir && !repo.hasFile(resolved)) {
        problems.push({ file, target, problem: 'no such file in the repository' });
        continue;
      }
      if (anchor && !isDir && resolved.endsWith('.md') && !headingAnchors(repo.read(resolved)).has(anchor)) {
        problems.push({ file, target, problem: `no heading makes the anchor #${anchor}` });
      }
    }
  }
  return problems;
}
