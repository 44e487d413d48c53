/**
 * No import circle anywhere in src/ (issue 45): the library's layers import strictly downward,
 * so a module can be read, tested and moved with what is below it alone. Every src/**\/*.ts is
 * read as text (Vite's glob import with `?raw`, resolved in vitest's Node process: workerd
 * cannot read the repository), its relative static imports and re-exports are the graph's
 * edges — `import type` and `export type … from` counted too, since a type that names a module
 * above its own is the same tangle for a reader even though the build erases it — and every
 * circle is reported, each as the path that closes it, so a failure says which imports to
 * move below their importers. Dynamic `import()` is not an edge: what it names is evaluated when
 * it runs (test/support/module-imports.ts).
 */
import { describe, expect, it } from 'vitest';
import { codeOf, relativeImports, resolveFrom } from '../support/module-imports.ts';

const sources = import.meta.glob<string>('/src/**/*.ts', { query: '?raw', import: 'default', eager: true });

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
