/**
 * What a new project's package.json depends on for `mcp-edge-sessions` (`init`): the copy that
 * runs `init`, as npm recorded where it came from. Without `--from`, a project written by a
 * packed tarball (`npx --yes ./mcp-edge-sessions-0.1.0.tgz init`) must depend on that tarball:
 * `^0.1.0` would send `npm install` to a registry that may not have it (a 404, after the files
 * are written). So the registry's range is written only where this copy came from the registry;
 * where `init` cannot tell, it refuses before writing anything, and names `--from`.
 *
 * Pure: bin/mcp-edge-sessions.mjs reads npm's lockfile (`origin`) and turns a tarball's path
 * into a `file:` specifier relative to the new project.
 */

/** Where the running copy of the package is, as bin/mcp-edge-sessions.mjs found it. */
export type PackageOrigin =
  /**
   * Installed by npm (npx's cache `~/.npm/_npx/<hash>/`, a project's or the global node_modules):
   * its lockfile entry's `resolved` (`file:../x.tgz` relative to `lockRoot`, a registry URL, ...),
   * undefined where no lockfile names it.
   */
  | { readonly kind: 'installed'; readonly resolved: string | undefined; readonly lockRoot: string }
  /** Not inside node_modules, in a git work tree: a checkout of the repository. */
  | { readonly kind: 'checkout'; readonly root: string }
  /** Not inside node_modules, and no git work tree: an unpacked copy, or another package manager's. */
  | { readonly kind: 'unknown'; readonly root: string };

export type PackageSource =
  /** Written as is: a registry range or version, a tarball URL, a git URL. */
  | { readonly kind: 'spec'; readonly spec: string }
  /** A packed tarball at `path`, relative to `base` (or absolute): written as a `file:` specifier. */
  | { readonly kind: 'tarball'; readonly path: string; readonly base: string }
  /** Nothing written: `message` says why, and what to pass. */
  | { readonly kind: 'refused'; readonly message: string };

export interface PackageSourceInput {
  /** `--from`, as given. */
  readonly from: string | undefined;
  /** Where `init` runs: a `--from` path is relative to it. */
  readonly cwd: string;
  readonly name: string;
  readonly version: string;
  readonly origin: PackageOrigin;
}

export function packageSource({ from, cwd, name, version, origin }: PackageSourceInput): PackageSource {
  if (from !== undefined) {
    const path = from.replace(/^file:/, '');
    return /\.tgz$/.test(path) ? { kind: 'tarball', path, base: cwd } : { kind: 'spec', spec: from };
  }
  const unknown = `${version} is not known to be on the registry`;
  const pack = 'npm pack there, then init --from <the .tgz it writes> (or --from a version on the registry)';
  switch (origin.kind) {
    case 'checkout':
      return refused(`this ${name} ${version} runs from a checkout (${origin.root}), and ${unknown}: ${pack}`);
    case 'unknown':
      return refused(
        `this ${name} ${version} runs from ${origin.root}, not from an npm install: init cannot tell where it came from, and ${unknown}: ${pack}`,
      );
    case 'installed': {
      const { resolved, lockRoot } = origin;
      if (resolved === undefined)
        return refused(
          `no npm lockfile says where this ${name} ${version} came from, and ${unknown}: give --from <path to the .tgz> (or a version on the registry)`,
        );
      if (resolved.startsWith('file:')) {
        const path = resolved.slice('file:'.length);
        return /\.tgz$/.test(path)
          ? { kind: 'tarball', path, base: lockRoot }
          : refused(`this ${name} was installed from a folder (${resolved}), and ${unknown}: ${pack}`);
      }
      let url: URL;
      try {
        url = new URL(resolved);
      } catch {
        return refused(
          `this ${name} was installed from ${resolved}, and ${unknown}: give --from <path to the .tgz> (or a version on the registry)`,
        );
      }
      // A registry's tarball (any registry: the user's npm configuration points at it): the
      // version is there, so the range installs it, and later fixes within it.
      if (isRegistryTarball(url, name, version)) return { kind: 'spec', spec: `^${version}` };
      // Another tarball URL, a git URL: npm installs it again from there.
      return { kind: 'spec', spec: resolved };
    }
  }
}

/** A registry's URL of this version's tarball: `<registry>/<name>/-/<name>-<version>.tgz`. */
function isRegistryTarball(url: URL, name: string, version: string): boolean {
  return (url.protocol === 'https:' || url.protocol === 'http:') && url.pathname.endsWith(`/${name}/-/${name}-${version}.tgz`);
}

const refused = (message: string): PackageSource => ({ kind: 'refused', message });
