// The references a text makes to files, and those that do not resolve (scripts/ci/check-package.mjs):
// a Markdown link (`[text](target)`, relative to the file's folder, its `#anchor` a heading of the
// target as GitHub makes it) and a path written out in prose, a comment or a help text
// (`node_modules/mcp-edge-sessions/docs/auth.md`, `docs/operations.md`: relative to the root or
// to the file's folder).
// A reference resolves where the file is inside the root: the installed package for its own
// files, the generated project (its node_modules included) for what init writes and says. A URL
// is not followed (nothing here goes on the network).
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative, sep } from 'node:path';

const LINK = /\]\(([^)\s]+)\)/g;
/** A link with its text, which is no reference of its own (`[docs/auth.md](node_modules/…)`). */
const WHOLE_LINK = /\[[^\]]*\]\([^)\s]+\)/g;
/** A written-out path: one that ends in .md, or one into the package (`node_modules/<name>/`); never a piece of a URL or of a longer path. */
const pathPattern = (name) =>
  new RegExp(`(?<![\\w./:-])((?:[\\w.-]+/)+[\\w.-]+\\.md|node_modules/${name}/[\\w./-]*[\\w/])(?![\\w/-])`, 'g');

/**
 * What in `text` does not resolve under `root`: one line per reference, naming it. `file` is
 * the text's path under `root` (`/`-separated), or undefined for a text that is no file (a help
 * text, named `label`): then its references are relative to the root. `name`: the package's.
 */
export function unresolvedReferences(text, { root, file, name, label = '(text)' }) {
  const problems = [];
  const where = file ?? label;
  const base = file === undefined ? '' : dirname(file);
  for (const [, target] of text.matchAll(LINK)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('<')) continue; // a URL, or an autolink
    const [path, anchor] = target.split('#', 2);
    const resolved = path === '' ? file : normalize(join(base, decodeURI(path)));
    const problem = check(root, resolved, anchor);
    if (problem !== undefined) problems.push(`${where}: link (${target}) ${problem}`);
  }
  for (const [, path] of text.replaceAll(WHOLE_LINK, '').matchAll(pathPattern(name))) {
    const beside = normalize(join(base, path));
    const problem = check(root, normalize(path), undefined) && check(root, beside, undefined);
    if (problem !== undefined) problems.push(`${where}: path ${path} ${problem}`);
  }
  return problems;
}

function check(root, path, anchor) {
  if (path === undefined) return 'is an anchor of no file';
  if (path.startsWith(`..${sep}`) || path === '..') return 'leaves its root';
  const full = join(root, path);
  if (!existsSync(full)) return `names ${relative(root, full) || '.'}, which is not there`;
  if (anchor === undefined || anchor === '' || !full.endsWith('.md') || statSync(full).isDirectory()) return undefined;
  return headingAnchors(readFileSync(full, 'utf8')).has(anchor) ? undefined : `names #${anchor}, no heading of ${path}`;
}

/** The anchors GitHub gives a Markdown file's headings: lower case, punctuation dropped, spaces as `-`, repeats numbered. */
export function headingAnchors(markdown) {
  const anchors = new Set();
  const seen = new Map();
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    const heading = fenced ? null : /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading === null) continue;
    const slug = heading[1]
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}
