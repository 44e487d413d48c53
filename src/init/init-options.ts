/**
 * `npx mcp-edge-sessions init <dir> [options]`: what the command line asks for, parsed into
 * plain data or refused with a message that says what would have been accepted. No I/O here
 * (bin/mcp-edge-sessions.mjs reads the arguments and writes the files).
 */

export type AuthMode = 'none' | 'jwt' | 'oauth';

export interface InitOptions {
  /** The folder to create (relative to where the command runs). */
  readonly dir: string;
  /** The Worker's name: the package's and wrangler.toml's; by default the folder's own name. */
  readonly name: string;
  readonly auth: AuthMode;
  /** Whether 2026-07-28 clients get the Tasks extension (a task object and its binding). */
  readonly tasks: boolean;
  /**
   * What the new package.json depends on for `mcp-edge-sessions`: by default this version from
   * the registry; a packed tarball's path (`./mcp-edge-sessions-0.1.0.tgz`) to try a build
   * that is not published.
   */
  readonly packageSpec: string | undefined;
}

export type InitCommand =
  | { readonly kind: 'init'; readonly options: InitOptions }
  | { readonly kind: 'help' }
  | { readonly kind: 'invalid'; readonly message: string };

export const USAGE = `Usage: npx mcp-edge-sessions init <dir> [options]

Writes a new MCP server Worker into <dir> (which must not exist, or be empty):
package.json, wrangler.toml, src/index.ts, src/tools.ts, a test in workerd, README.md.

Options:
  --auth none|jwt|oauth   who may call it (default none); see the package's docs/auth.md.
                          oauth's sign-in page is a demo that checks no password: it serves
                          on loopback only until you pass your own (oauth.authorize), or set
                          DEMO_SIGN_IN = "anyone-is-anyone" (then anyone is anyone)
  --no-tasks              no Tasks extension for 2026-07-28 clients (no task object)
  --name <name>           the Worker's name (default: the folder's name)
  --from <spec>           where package.json gets mcp-edge-sessions from
                          (default: this version; a path to a packed .tgz to try a build)
  -h, --help              this text`;

/** A Worker name wrangler deploys: lower-case letters, digits and dashes, starting with a letter. */
const WORKER_NAME = /^[a-z][a-z0-9-]{0,62}$/;

export function parseInitCommand(argv: readonly string[]): InitCommand {
  if (argv.length === 0 || argv.includes('-h') || argv.includes('--help')) return { kind: 'help' };
  const [command, ...rest] = argv;
  if (command !== 'init') return invalid(`unknown command ${JSON.stringify(command)}: the one command is init`);
  let dir: string | undefined;
  let name: string | undefined;
  let auth: AuthMode = 'none';
  let tasks = true;
  let packageSpec: string | undefined;
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i]!;
    const [flag, inline] =
      arg.startsWith('--') && arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined];
    const value = (): string | undefined => inline ?? rest[++i];
    switch (flag) {
      case '--no-tasks':
        if (inline !== undefined) return invalid('--no-tasks takes no value');
        tasks = false;
        break;
      case '--auth': {
        const mode = value();
        if (mode !== 'none' && mode !== 'jwt' && mode !== 'oauth')
          return invalid(`--auth takes none, jwt or oauth, not ${JSON.stringify(mode ?? '')}`);
        auth = mode;
        break;
      }
      case '--name':
        name = value();
        if (name === undefined || !WORKER_NAME.test(name))
          return invalid(`--name: ${JSON.stringify(name ?? '')} is not a Worker name (a-z, 0-9 and -, from a letter, at most 63)`);
        break;
      case '--from':
        packageSpec = value();
        if (packageSpec === undefined || packageSpec === '') return invalid('--from takes a version, a range or a path to a .tgz');
        break;
      default:
        if (arg.startsWith('-')) return invalid(`unknown option ${arg}`);
        if (dir !== undefined) return invalid(`one folder only: ${JSON.stringify(dir)} and ${JSON.stringify(arg)}`);
        dir = arg;
    }
  }
  if (dir === undefined) return invalid('init needs the folder to create: npx mcp-edge-sessions init <dir>');
  if (name === undefined) {
    name = workerName(dir);
    if (name === undefined) return invalid(`the folder's name ${JSON.stringify(baseName(dir))} is not a Worker name: give one with --name`);
  }
  return { kind: 'init', options: { dir, name, auth, tasks, packageSpec } };
}

/** The folder's last segment, made a Worker name where that takes only lower-casing. */
function workerName(dir: string): string | undefined {
  const candidate = baseName(dir).toLowerCase().replaceAll('_', '-');
  return WORKER_NAME.test(candidate) ? candidate : undefined;
}

function baseName(dir: string): string {
  return (
    dir
      .replace(/[\\/]+$/, '')
      .split(/[\\/]/)
      .at(-1) ?? ''
  );
}

const invalid = (message: string): InitCommand => ({ kind: 'invalid', message });
