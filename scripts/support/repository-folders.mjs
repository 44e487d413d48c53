/**
 * For vitest.config.ts: a Vite plugin by which a test reads a Markdown file of the repository
 * together with the repository's folders (`import.meta.glob('/CONTRIBUTING.md', { query:
 * '?folders', … })`). Tests run in workerd, which can neither read the repository's files nor
 * run git; the import is resolved here, in vitest's Node process. Used by
 * test/repository/contributing-map.test.ts, which holds CONTRIBUTING.md's map to the tree.
 *
 * The module's default export: { text, folders, source }. `text` is the file; `folders` every
 * folder under the repository's root that holds a tracked file, or holds such a folder
 * (`/`-separated, no trailing `/`, sorted; the root itself is not listed); `source` says where
 * they came from: 'git' (`git ls-files`, the files still on disk) or, where git or the
 * repository's .git is missing (a source archive), 'disk': every file under the root but those
 * .gitignore ignores, and .git.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, posix } from 'node:path';

const QUERY = '?folders';

export function repositoryFolders() {
  return {
    name: 'mcp-edge-sessions:repository-folders',
    enforce: 'pre',
    // Never from vitest's module cache on disk: it is keyed by the file's text, and the folders
    // change without it.
    configureVitest({ defineCacheKeyGenerator }) {
      defineCacheKeyGenerator(({ id }) => (id.endsWith(QUERY) ? false : undefined));
    },
    load(id) {
      if (!id.endsWith(QUERY)) return null;
      const path = id.slice(0, -QUERY.length);
      this.addWatchFile(path);
      const root = dirname(path);
      let files = trackedFiles(root);
      const source = files === undefined ? 'disk' : 'git';
      files ??= filesOnDisk(root);
      const folders = new Set();
      for (const file of files) {
        for (let folder = posix.dirname(file); folder !== '.'; folder = posix.dirname(folder)) folders.add(folder);
      }
      return `export default ${JSON.stringify({ text: readFileSync(path, 'utf8'), folders: [...folders].sort(), source })};`;
    },
  };
}

/** The files git tracks under `root` that are on disk, or undefined where git cannot say. */
function trackedFiles(root) {
  let listed;
  try {
    listed = execFileSync('git', ['ls-files', '-z'], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  } catch {
    return undefined;
  }
  return listed.split('\0').filter((file) => file !== '' && existsSync(join(root, file)));
}

/** Every file under `root`, but .git and what the root's .gitignore ignores (its patterns as plain names or paths, `*` within a name). */
function filesOnDisk(root) {
  const ignore = join(root, '.gitignore');
  const patterns = existsSync(ignore) ? readFileSync(ignore, 'utf8').split('\n') : [];
  const rules = patterns
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => {
      const pattern = line.replace(/^\//, '').replace(/\/$/, '');
      const expression = new RegExp(`^${pattern.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*')}$`);
      // A pattern without a `/` inside matches a name at any depth; one with a `/`, a path from the root.
      return pattern.includes('/') ? (path) => expression.test(path) : (path) => expression.test(posix.basename(path));
    });
  const ignored = (path) => posix.basename(path) === '.git' || rules.some((rule) => rule(path));
  const files = [];
  const walk = (folder) => {
    for (const entry of readdirSync(join(root, folder), { withFileTypes: true })) {
      const path = folder === '' ? entry.name : `${folder}/${entry.name}`;
      if (ignored(path)) continue;
      if (entry.isDirectory()) walk(path);
      else files.push(path);
    }
  };
  walk('');
  return files;
}
