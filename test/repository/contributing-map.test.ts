/**
 * CONTRIBUTING.md's "Source layout" is the map of the repository: one line per folder, indented
 * two spaces a level under its parent, its name ending in `/`, then what the folder holds. This
 * test keeps it true: the folders the map names are exactly the repository's (every folder that
 * holds a tracked file, or holds such a folder: `git ls-files`, read in vitest's Node process by
 * scripts/support/repository-folders.mjs), and it names what is missing or extra. What each file
 * holds is said in the file's own header, not in the map.
 */
import { describe, expect, it } from 'vitest';

interface Repository {
  text: string;
  folders: string[];
  source: 'git' | 'disk';
}

/** CONTRIBUTING.md with the repository's folders (scripts/support/repository-folders.mjs). */
function readRepository(): Repository {
  const [found] = Object.values(import.meta.glob<Repository>('/CONTRIBUTING.md', { query: '?folders', import: 'default', eager: true }));
  if (found === undefined) throw new Error('no CONTRIBUTING.md at the root of the repository');
  return found;
}

const repository = readRepository();

/** The map: the first fenced block after the "## Source layout" heading, its lines. */
function mapLines(text: string): string[] {
  const [, section] = text.split(/^## Source layout$/m);
  if (section === undefined) throw new Error('CONTRIBUTING.md has no "## Source layout" section');
  const block = /^```\n(?<map>[\s\S]*?)^```$/m.exec(section.split(/^## /m)[0] ?? '')?.groups?.map;
  if (block === undefined) throw new Error('the "Source layout" section has no fenced map');
  return block.split('\n').filter((line) => line.trim() !== '');
}

/** Each line's folder path (from its indentation and its parents), or the problem with the line. */
function readMap(lines: string[]): { folders: string[]; problems: string[] } {
  const folders: string[] = [];
  const problems: string[] = [];
  const parents: string[] = [];
  for (const line of lines) {
    const { indent, name } = /^(?<indent> *)(?<name>[^\s/]+)\/ +\S/.exec(line)?.groups ?? {};
    const depth = (indent ?? '').length / 2;
    if (name === undefined || !Number.isInteger(depth) || depth > parents.length) {
      problems.push(`not a folder line (two spaces a level, one name ending in "/", a description): ${JSON.stringify(line)}`);
      continue;
    }
    parents.length = depth;
    parents.push(name);
    const path = parents.join('/');
    if (folders.includes(path)) problems.push(`listed twice: ${path}/`);
    folders.push(path);
  }
  return { folders, problems };
}

describe("CONTRIBUTING.md's map of the repository", () => {
  const { folders, problems } = readMap(mapLines(repository.text));

  it('has one well-formed line per folder', () => {
    expect(problems).toEqual([]);
  });

  it(`names every folder of the repository and no other (folders from ${repository.source})`, () => {
    const missing = repository.folders.filter((folder) => !folders.includes(folder)).map((folder) => `${folder}/`);
    const extra = folders.filter((folder) => !repository.folders.includes(folder)).map((folder) => `${folder}/`);
    expect({ missing, extra }).toEqual({ missing: [], extra: [] });
  });
});
