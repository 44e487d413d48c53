/**
 * `npx mcp-edge-sessions init <dir> [options]`: what the command line asks for, parsed into
 * plain data or refused with a message that says what would have been accepted. No I/O here
 * (bin/mcp-edge-sessions.mjs reads the arguments and writes the files).
 */

export type AuthMode = 'none' | 'jwt' | 'oauth';

/**
 * Who signs users in to AUTH=oauth's embedded server (its `SIGN_IN`): the demo page (loopback
 * only), an OpenID Connect provider, Cloudflare Access, or GitHub.
 */
export type Idp = 'demo' | 'oidc' | 'access' | 'github';
export const IDPS: readonly Idp[] = ['demo', 'oidc', 'access', 'github'];

export interface InitOptions {
  /** The folder to create (relative to where the command runs). */
  readonly dir: string;
  /** The Worker's name: the package's and wrangler.toml's; by default the folder's own name. */
  readonly name: string;
  readonly auth: AuthMode;
  /** With `auth: 'oauth'` only (default `demo`): who signs users in. Undefined for the other modes. */
  readonly idp: Idp | undefined;
  /** Whether 2026-07-28 clients get the Tasks extension (a task object and its binding). */
  readonly tasks: boolean;
  /**
   * `--from`: what the new package.json depends on for `mcp-edge-sessions`, a version or range,
   * or a packed tarball's path (`./mcp-edge-sessions-0.1.0.tgz`). Undefined: where the running
   * copy came from (package-source.ts).
   */
  readonly packageSpec: string | undefined;
}

export type InitCommand =
  | { readonly kind: 'init'; readonly options: InitOptions }
  | { readonly kind: 'help' }
  | { readonly kind: 'invalid'; readonly message: string };

export const USAGE = `Usage: npx mcp-edge-sessions init <dir> [options]
       npx --yes ./mcp-edge-sessions-<version>.tgz init <dir> [options]   (a packed tarball)

Writes a new MCP server Worker into <dir> (which must not exist, or be empty):
package.json, wrangler.toml, src/index.ts, src/tools.ts, a test in workerd, README.md.
This package's docs are in the project once installed: node_modules/mcp-edge-sessions/docs/.

Options:
  --auth none|jwt|oauth   who may call it (default none); see
                          node_modules/mcp-edge-sessions/docs/auth.md.
  --idp demo|oidc|access|github
                          with --auth oauth: who signs users in (default demo).
                          demo: a page that checks no password; it serves on loopback only
                          (unless DEMO_SIGN_IN = "anyone-is-anyone": then anyone is anyone).
                          oidc: your OpenID Connect provider (Google, Entra, Okta, Auth0,
                          Keycloak, ...): OIDC_ISSUER, OIDC_CLIENT_ID, secret OIDC_CLIENT_SECRET.
                          access: Cloudflare Access in front of /authorize: ACCESS_TEAM_DOMAIN,
                          ACCESS_AUD. github: a GitHub OAuth app: GITHUB_CLIENT_ID, secret
                          GITHUB_CLIENT_SECRET. The variables are written empty: the Worker
                          refuses to serve (its log names each) until you fill them in; the
                          project's README says where each comes from.
  --no-tasks              no Tasks extension for 2026-07-28 clients (no task object)
  --name <name>           the Worker's name (default: the folder's name)
  --from <spec>           where package.json gets mcp-edge-sessions from: a version or
                          range, or a path to a packed .tgz (default: where this copy came
                          from, as npm recorded it: the tarball npx ran, as a file: path
                          relative to <dir>, or this version from the registry; where npm
                          recorded neither, init stops and asks for --from)
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
  let idp: Idp | undefined;
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
      case '--idp': {
        const source = value();
        if (!IDPS.includes(source as Idp)) return invalid(`--idp takes ${IDPS.join(', ')}, not ${JSON.stringify(source ?? '')}`);
        idp = source as Idp;
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
  // Only the embedded authorization server signs users in: a jwt server's issuer does, and none has no users.
  if (idp !== undefined && auth !== 'oauth')
    return invalid(
      `--idp ${idp} needs --auth oauth: only the embedded authorization server signs users in (with --auth ${auth} ${auth === 'jwt' ? 'your own authorization server does' : 'nobody signs in'})`,
    );
  if (auth === 'oauth') idp ??= 'demo';
  if (dir === undefined) return invalid('init needs the folder to create: npx mcp-edge-sessions init <dir>');
  if (name === undefined) {
    name = workerName(dir);
    if (name === undefined) return invalid(`the folder's name ${JSON.stringify(baseName(dir))} is not a Worker name: give one with --name`);
  }
  return { kind: 'init', options: { dir, name, auth, idp, tasks, packageSpec } };
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
