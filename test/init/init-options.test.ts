/** `npx mcp-edge-sessions init`: every accepted and refused command line (src/init/init-options.ts). */
import { describe, expect, it } from 'vitest';
import { parseInitCommand, USAGE } from '../../src/init/init-options.ts';

const defaults = { auth: 'none', idp: undefined, tasks: true, packageSpec: undefined };

describe('parseInitCommand', () => {
  it.each([
    [['init', 'my-server'], { dir: 'my-server', name: 'my-server', ...defaults }],
    [['init', './apps/My_Server/'], { dir: './apps/My_Server/', name: 'my-server', ...defaults }],
    [['init', 'x', '--no-tasks'], { dir: 'x', name: 'x', ...defaults, tasks: false }],
    [['init', '--auth', 'jwt', 'x'], { dir: 'x', name: 'x', ...defaults, auth: 'jwt' }],
    // AUTH=oauth signs users in with the demo page unless --idp names a provider; the demo stays loopback-only.
    [['init', 'x', '--auth=oauth'], { dir: 'x', name: 'x', ...defaults, auth: 'oauth', idp: 'demo' }],
    [['init', 'x', '--auth', 'oauth', '--idp', 'oidc'], { dir: 'x', name: 'x', ...defaults, auth: 'oauth', idp: 'oidc' }],
    [['init', 'x', '--idp=access', '--auth=oauth'], { dir: 'x', name: 'x', ...defaults, auth: 'oauth', idp: 'access' }],
    [['init', 'x', '--auth', 'oauth', '--idp', 'github'], { dir: 'x', name: 'x', ...defaults, auth: 'oauth', idp: 'github' }],
    [['init', 'x', '--auth', 'oauth', '--idp', 'demo'], { dir: 'x', name: 'x', ...defaults, auth: 'oauth', idp: 'demo' }],
    [['init', '9lives', '--name', 'cats'], { dir: '9lives', name: 'cats', ...defaults }],
    [
      ['init', 'x', '--from', '../mcp-edge-sessions-0.1.0.tgz'],
      { dir: 'x', name: 'x', ...defaults, packageSpec: '../mcp-edge-sessions-0.1.0.tgz' },
    ],
  ])('%j', (argv, options) => {
    expect(parseInitCommand(argv)).toEqual({ kind: 'init', options });
  });

  it.each([[[]], [['--help']], [['init', 'x', '-h']]])('%j asks for the usage', (argv) => {
    expect(parseInitCommand(argv)).toEqual({ kind: 'help' });
  });

  it.each([
    [['create', 'x'], 'unknown command "create"'],
    [['init'], 'init needs the folder'],
    [['init', 'a', 'b'], 'one folder only'],
    [['init', 'x', '--auth', 'basic'], '--auth takes none, jwt or oauth, not "basic"'],
    [['init', 'x', '--auth'], '--auth takes none, jwt or oauth, not ""'],
    [['init', 'x', '--no-tasks=yes'], '--no-tasks takes no value'],
    [['init', 'x', '--idp', 'oidc'], '--idp oidc needs --auth oauth: only the embedded authorization server signs users in'],
    [['init', 'x', '--auth', 'jwt', '--idp', 'github'], '--idp github needs --auth oauth'],
    [['init', 'x', '--auth', 'none', '--idp=demo'], '--idp demo needs --auth oauth'],
    [['init', 'x', '--auth', 'oauth', '--idp', 'google'], '--idp takes demo, oidc, access, github, not "google"'],
    [['init', 'x', '--auth', 'oauth', '--idp'], '--idp takes demo, oidc, access, github, not ""'],
    [['init', 'x', '--name', 'Not A Name'], 'is not a Worker name'],
    [['init', '9lives'], 'give one with --name'],
    [['init', 'x', '--from='], '--from takes'],
    [['init', 'x', '--verbose'], 'unknown option --verbose'],
  ])('%j is refused', (argv, message) => {
    const command = parseInitCommand(argv);
    expect(command.kind).toBe('invalid');
    expect(command.kind === 'invalid' && command.message).toContain(message);
  });

  it('shows a tarball run with npx --yes (without it, npx stops where no terminal answers), and docs where a project has them', () => {
    expect(USAGE).toContain('npx --yes ./mcp-edge-sessions-<version>.tgz init <dir>');
    expect(USAGE).toContain('node_modules/mcp-edge-sessions/docs/auth.md');
    expect(USAGE).not.toMatch(/(?<!mcp-edge-sessions\/)docs\//);
  });
});
