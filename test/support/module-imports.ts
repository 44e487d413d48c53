/**
 * The static imports of a TypeScript module, read from its text (test/repository/: the import
 * circles of src/, and what a Worker evaluates at startup). Enough of a lexer for src/ (codeOf),
 * not a parser of TypeScript; the graphs are the tests'.
 */

/** A static import or re-export of a module: what it names, and whether it names types alone (`import type`, `export type`: erased by the build). */
export interface ModuleImport {
  readonly specifier: string;
  readonly typeOnly: boolean;
}

/**
 * A module's static imports and re-exports, as written: `import … from './x.ts';`,
 * `import type …`, `export … from`, `import './x.ts';`, of a relative path or a package. A
 * statement starts a line (the formatter writes them so) and ends at its specifier's `;`,
 * whatever lines its names take. Read in the module's code alone (`codeOf`): src/init/ writes a
 * generated project's imports inside template literals, which are text, not imports. A dynamic
 * `import()` is none of them: what it names is evaluated when it runs.
 */
const STATEMENT = /^(?:import|export)\b[^;]*?\bfrom\s*(['"])([^'"]+)\1\s*;|^import\s*(['"])([^'"]+)\3\s*;/gm;

export function moduleImports(text: string): ModuleImport[] {
  return [...codeOf(text).matchAll(STATEMENT)].map((match) => ({
    specifier: (match[2] ?? match[4])!,
    typeOnly: /^(?:import|export)\s+type\b/.test(match[0]),
  }));
}

/** The relative ones' specifiers, type-only included. */
export function relativeImports(text: string): string[] {
  return moduleImports(text)
    .map(({ specifier }) => specifier)
    .filter((specifier) => /^\.{1,2}\//.test(specifier));
}

/** After one of these (or at the start), a `/` begins a regular expression, not a division. */
const BEFORE_REGEX = /(?:^|[(,=:[!&|?{};+\-*%<>~^]|\b(?:return|case|typeof|void|in|of)\s*)$/;

/**
 * `text` with its comments and the text of its template literals blanked (newlines kept, so a
 * line is where it was); quoted strings and regular expressions kept as they are, but stepped
 * over whole, so a quote or a backtick inside one starts nothing. A template's `${…}` is code
 * again, templates nested in it included. Enough of a lexer for src/, not a parser of TypeScript.
 */
export function codeOf(text: string): string {
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
export function resolveFrom(from: string, specifier: string): string {
  const parts = from.split('/').slice(0, -1);
  for (const part of specifier.split('/')) {
    if (part === '..') parts.pop();
    else if (part !== '.') parts.push(part);
  }
  return parts.join('/');
}
