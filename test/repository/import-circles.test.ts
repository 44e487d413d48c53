/**
 * No import circle anywhere in src/ (issue 45): the library's layers import strictly downward,
 * so a module can be read, tested and moved with what is below it alone. Every src/**\/*.ts is
 * read as text (Vite's glob import with `?raw`, resolved in vitest's Node process: workerd
 * cannot read the repository), its relative static imports and re-exports are the graph's
 * edges — `import type` and `export type … from` counted too, since a type that names a module
 * above its own is the same tangle for a reader even though the build erases it — and every
 * circle is reported, each as the path that closes it, so a failure says which imports to
 * move below their importers. Dynamic `import()` is not an edge (src/ has none).
 */
import { describe, expect, it } from 'vitest';

const sources = import.meta.glob<string>('/src/**/*.ts', { query: '?raw', import: 'default', eager: true });

/**
 * A module's relative static imports and re-exports, as written: `import … from './x.ts';`,
 * `import type …`, `export … from`, `import './x.ts';`. A statement starts a line (the
 * formatter writes them so) and ends at its specifier's `;`, whatever lines its names take.
 * Read in the module's code alone (`codeOf`): src/init/ writes a generated project's imports
 * inside template literals, which are text, not imports.
 */
const STATEMENT = /^(?:import|export)\b[^;]*?\bfrom\s*(['"])(\.{1,2}\/[^'"]*)\1\s*;|^import\s*(['"])(\.{1,2}\/[^'"]*)\3\s*;/gm;

function relativeImports(text: string): string[] {
  return [...codeOf(text).matchAll(STATEMENT)].map((match) => (match[2] ?? match[4])!);
}

/** After one of these (or at the start), a `/` begins a regular expression, not a division. */
const BEFORE_REGEX = /(?:^|[(,=:[!&|?{};+\-*%<>~^]|\b(?:return|case|typeof|void|in|of)\s*)$/;

/**
 * `text` with its comments and the text of its template literals blanked (newlines kept, so a
 * line is where it was); quoted strings and regular expressions kept as they are, but stepped
 * over whole, so a quote or a backtick inside one starts nothing. A template's `${…}` is code
 * again, templates nested in it included. Enough of a lexer for src/, not a parser of TypeScript.
 */
function codeOf(text: string): string {
  let out = '';
  let i = 0;
  let depth = 0;
  /** For each `${` open, the brace depth at which its `}` goes back into the template's text. */
  const resumes: number[] = [];
  const blank = (from: number, to: number) => {
    out += text.slice(from, to).replace(/[^\n]/g, ' ');
    i = to;
  };
  /** Blanks a template's text from `i` up to its closing backtick or its next `${`. */
  const templateText = () => {
    let j = i;
    while (j < text.length && text[j] !== '`' && !(text[j] === '$' && text[j + 1] === '{')) j += text[j] === '\\' ? 2 : 1;
    blank(i, Math.min(j, text.length));
    if (text[i] === '`') {
      out += '`';
      i += 1;
    } else if (i < text.length) {
      out += '${';
      i += 2;
      resumes.push(depth);
      depth += 1;
    }
  };
  while (i < text.length) {
    const c = text[i]!;
    const next = text[i + 1];
    if (c === '/' && next === '/') {
      const end = text.indexOf('\n', i);
      blank(i, end === -1 ? text.length : end);
    } else if (c === '/' && next === '*') {
      const end = text.indexOf('*/', i + 2);
      blank(i, end === -1 ? text.length : end + 2);
    } else if (c === "'" || c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== c && text[j] !== '\n') j += text[j] === '\\' ? 2 : 1;
      out += text.slice(i, j + 1);
      i = j + 1;
    } else if (c === '`') {
      out += '`';
      i += 1;
      templateText();
    } else if (c === '/' && BEFORE_REGEX.test(out.trimEnd())) {
      let j = i + 1;
      let inClass = false;
      while (j < text.length && text[j] !== '\n' && (inClass || text[j] !== '/')) {
        if (text[j] === '[') inClass = true;
        else if (text[j] === ']') inClass = false;
        j += text[j] === '\\' ? 2 : 1;
      }
      out += text.slice(i, j + 1);
      i = j + 1;
    } else if (c === '}' && resumes.at(-1) === depth - 1) {
      resumes.pop();
      depth -= 1;
      out += '}';
      i += 1;
      templateText();
    } else {
      if (c === '{') depth += 1;
      else if (c === '}') depth -= 1;
      out += c;
      i += 1;
    }
  }
  return out;
}

/** `specifier` as imported from the file at `from` (both repository paths from `/`). */
function resolveFrom(from: string, specifier: string): string {
  const parts = from.split('/').slice(0, -1);
  for (const part of specifier.split('/')) {
    if (part === '..') parts.pop();
    else if (part !== '.') parts.push(part);
  }
  return parts.join('/');
}

/**
 * Every elementary circle of `graph`, each once: written from its least node (in sort order)
 * and back to it. Each strongly connected component is searched alone, from each of its nodes
 * in turn through nodes greater than it, so a circle is found only from its least node.
 */
function circles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const found: string[][] = [];
  for (const component of components(graph)) {
    const members = new Set(component);
    const sorted = [...component].sort();
    for (const start of sorted) {
      const path = [start];
      const onPath = new Set(path);
      const walk = (node: string) => {
        for (const next of graph.get(node) ?? []) {
          if (next === start) found.push([...path, start]);
          else if (members.has(next) && next > start && !onPath.has(next)) {
            path.push(next);
            onPath.add(next);
            walk(next);
            path.pop();
            onPath.delete(next);
          }
        }
      };
      walk(start);
    }
  }
  return found;
}

/** Tarjan's strongly connected components with more than one node, or one that imports itself. */
function components(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const result: string[][] = [];
  const visit = (node: string) => {
    index.set(node, index.size);
    low.set(node, index.get(node)!);
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node)!, index.get(next)!));
      }
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1 || (graph.get(node) ?? []).includes(node)) result.push(component);
  };
  for (const node of [...graph.keys()].sort()) if (!index.has(node)) visit(node);
  return result;
}

const graph = new Map<string, string[]>();
const unresolved: string[] = [];
for (const [file, text] of Object.entries(sources)) {
  const imports = relativeImports(text).map((specifier) => resolveFrom(file, specifier));
  graph.set(file, imports);
  for (const target of imports) if (!(target in sources)) unresolved.push(`${file} imports ${target}`);
}

describe('the import graph of src/', () => {
  it('has no circle', () => {
    const found = circles(graph).map((circle) => circle.map((file) => file.replace('/src/', '')).join(' -> '));
    expect(found, `${found.length} import circle(s) in src/:\n${found.join('\n')}\n`).toEqual([]);
  });

  it('reads every module and resolves every relative import to one of them', () => {
    expect(graph.size).toBeGreaterThan(100);
    expect(graph.get('/src/lib.ts')).toContain('/src/tasks/task-object.ts');
    // A type-only import is an edge: the task round names its tap by type alone.
    expect(graph.get('/src/tasks/task-round.ts')).toContain('/src/tasks/notification-tap.ts');
    expect(unresolved).toEqual([]);
  });
});

describe('the reading of imports', () => {
  it('takes static imports, type imports, re-exports and bare imports, on one line or several', () => {
    const text = [
      "import { a } from './a.ts';",
      "import type { B } from '../b.ts';",
      'import {',
      '  c,',
      '  type C,',
      "} from './c/index.ts';",
      "export { d } from './d.ts';",
      "export type { E } from './e.ts';",
      "export * from './f.ts';",
      "import './g.ts';",
      "import { z } from 'zod';",
      " * import { h } from './h.ts';",
      "const i = await import('./i.ts');",
      "export const j = 'from ./j.ts';",
    ].join('\n');
    expect(relativeImports(text)).toEqual(['./a.ts', '../b.ts', './c/index.ts', './d.ts', './e.ts', './f.ts', './g.ts']);
  });

  it('never reads an import in a template literal, a comment, or past a quote inside a regular expression', () => {
    const text = [
      'const project = `',
      "import { registerTools } from './tools.ts';",
      '${options.auth === `none` ? `',
      "import { x } from './x.ts';",
      '` : ``}',
      '`;',
      '/*',
      "import { y } from './y.ts';",
      '*/',
      'const quote = /[\'"`]/g;',
      "import { z } from './z.ts';",
      'const ratio = a / b / c;',
      "import type { W } from './w.ts';",
    ].join('\n');
    expect(relativeImports(text)).toEqual(['./z.ts', './w.ts']);
    expect(codeOf(text).split('\n')).toHaveLength(13);
  });

  it('resolves a specifier against the importing file', () => {
    expect(resolveFrom('/src/tasks/task-object.ts', '../core/task.ts')).toBe('/src/core/task.ts');
    expect(resolveFrom('/src/tasks/task-object.ts', './task-store.ts')).toBe('/src/tasks/task-store.ts');
  });
});

describe('the circle finder', () => {
  const of = (edges: Record<string, string[]>) => circles(new Map(Object.entries(edges)));

  it('finds none in a graph that only goes down', () => {
    expect(of({ a: ['b', 'c'], b: ['c'], c: [] })).toEqual([]);
  });

  it('finds every circle of a component, each once, from its least module', () => {
    expect(of({ a: ['b'], b: ['a', 'c'], c: ['a'], d: ['d'], e: ['a'] }).map((circle) => circle.join(' -> '))).toEqual([
      'a -> b -> a',
      'a -> b -> c -> a',
      'd -> d',
    ]);
  });
});
