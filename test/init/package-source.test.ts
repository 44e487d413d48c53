/**
 * What `init` depends on for mcp-edge-sessions (src/init/package-source.ts): `--from` when given;
 * else where npm recorded this copy came from; else a refusal that names `--from`, before
 * anything is written. The lockfile entries are npm 11's (npx's cache `~/.npm/_npx/<hash>/`
 * records a tarball relative to itself). scripts/ci/check-package.mjs runs the real thing.
 */
import { describe, expect, it } from 'vitest';
import { type PackageOrigin, type PackageSource, packageSource } from '../../src/init/package-source.ts';

const NPX = '/home/me/.npm/_npx/be705f3d4cad04c6';
const installed = (resolved: string | undefined): PackageOrigin => ({ kind: 'installed', resolved, lockRoot: NPX });
const source = (from: string | undefined, origin: PackageOrigin) =>
  packageSource({ from, cwd: '/home/me/work', name: 'mcp-edge-sessions', version: '0.1.0', origin });

describe('packageSource', () => {
  it.each<[string, string | undefined, PackageOrigin, PackageSource]>([
    [
      'npx --yes ./mcp-edge-sessions-0.1.0.tgz: that tarball, as npx recorded it',
      undefined,
      installed('file:../../../work/mcp-edge-sessions-0.1.0.tgz'),
      { kind: 'tarball', path: '../../../work/mcp-edge-sessions-0.1.0.tgz', base: NPX },
    ],
    [
      'an absolute tarball path',
      undefined,
      installed('file:/srv/builds/mcp-edge-sessions-0.1.0.tgz'),
      { kind: 'tarball', path: '/srv/builds/mcp-edge-sessions-0.1.0.tgz', base: NPX },
    ],
    [
      'npx mcp-edge-sessions (the public registry): its range',
      undefined,
      installed('https://registry.npmjs.org/mcp-edge-sessions/-/mcp-edge-sessions-0.1.0.tgz'),
      { kind: 'spec', spec: '^0.1.0' },
    ],
    [
      "a private registry (the user's npm configuration names it): its range",
      undefined,
      installed('https://npm.example.corp/api/npm/mcp-edge-sessions/-/mcp-edge-sessions-0.1.0.tgz'),
      { kind: 'spec', spec: '^0.1.0' },
    ],
    [
      "a tarball URL that is not a registry's: that URL",
      undefined,
      installed('https://builds.example.com/mcp-edge-sessions-0.1.0.tgz'),
      { kind: 'spec', spec: 'https://builds.example.com/mcp-edge-sessions-0.1.0.tgz' },
    ],
    [
      "another version's registry path: not this version, so that URL",
      undefined,
      installed('https://registry.npmjs.org/mcp-edge-sessions/-/mcp-edge-sessions-0.0.9.tgz'),
      { kind: 'spec', spec: 'https://registry.npmjs.org/mcp-edge-sessions/-/mcp-edge-sessions-0.0.9.tgz' },
    ],
    [
      'a git URL: that URL',
      undefined,
      installed('git+ssh://git@example.com/me/mcp-edge-sessions.git#0123abc'),
      { kind: 'spec', spec: 'git+ssh://git@example.com/me/mcp-edge-sessions.git#0123abc' },
    ],
    [
      '--from a tarball wins over the origin, relative to where init runs',
      './mcp-edge-sessions-0.1.0.tgz',
      { kind: 'checkout', root: '/home/me/src/mcp-edge-sessions' },
      { kind: 'tarball', path: './mcp-edge-sessions-0.1.0.tgz', base: '/home/me/work' },
    ],
    [
      '--from file:<tarball>, the same',
      'file:../mcp-edge-sessions-0.1.0.tgz',
      installed(undefined),
      { kind: 'tarball', path: '../mcp-edge-sessions-0.1.0.tgz', base: '/home/me/work' },
    ],
    ['--from a version: as given', '0.1.0', installed('file:../../../work/mcp-edge-sessions-0.1.0.tgz'), { kind: 'spec', spec: '0.1.0' }],
  ])('%s', (_, from, origin, expected) => {
    expect(source(from, origin)).toEqual(expected);
  });

  it.each<[string, PackageOrigin, string]>([
    [
      'a checkout',
      { kind: 'checkout', root: '/home/me/src/mcp-edge-sessions' },
      'runs from a checkout (/home/me/src/mcp-edge-sessions), and 0.1.0 is not known to be on the registry: npm pack there, then init --from <the .tgz it writes>',
    ],
    ['an unpacked copy', { kind: 'unknown', root: '/tmp/package' }, 'runs from /tmp/package, not from an npm install'],
    ['no lockfile entry', installed(undefined), 'no npm lockfile says where this mcp-edge-sessions 0.1.0 came from'],
    ['a folder', installed('file:../../../src/mcp-edge-sessions'), 'installed from a folder (file:../../../src/mcp-edge-sessions)'],
    ['a path that is no URL', installed('../somewhere'), 'installed from ../somewhere'],
  ])('%s, without --from: refused, naming --from', (_, origin, message) => {
    const refusal = source(undefined, origin);
    expect(refusal.kind).toBe('refused');
    expect(refusal.kind === 'refused' && refusal.message).toContain(message);
    expect(refusal.kind === 'refused' && refusal.message).toContain('--from');
  });
});
