/**
 * Host and Origin allowlists: the transport spec's DNS-rebinding defence.
 * 2025-11-25 transports: "Servers MUST validate the Origin header on all incoming
 * connections to prevent DNS rebinding attacks. If the Origin header is present and
 * invalid, servers MUST respond with HTTP 403 Forbidden."
 *
 * Entries are comma-separated. An entry without a port matches every port of that name
 * (`localhost` matches `localhost:8787`; `http://localhost` matches `http://localhost:6274`);
 * `*` matches everything.
 */
export interface Allowlist {
  readonly any: boolean;
  readonly entries: readonly { readonly name: string; readonly port?: string }[];
}

function splitHostPort(host: string): { name: string; port?: string } | undefined {
  const bracketed = /^(\[[0-9A-Fa-f:.]+\])(?::([0-9]{1,5}))?$/.exec(host);
  if (bracketed !== null)
    return bracketed[2] === undefined ? { name: bracketed[1]!.toLowerCase() } : { name: bracketed[1]!.toLowerCase(), port: bracketed[2] };
  const plain = /^([A-Za-z0-9.-]+)(?::([0-9]{1,5}))?$/.exec(host);
  if (plain === null) return undefined;
  return plain[2] === undefined ? { name: plain[1]!.toLowerCase() } : { name: plain[1]!.toLowerCase(), port: plain[2] };
}

/** Browsers omit the scheme's default port from Origin; an entry may still spell it out. */
const DEFAULT_PORTS: Readonly<Record<string, string>> = { http: '80', https: '443' };

/** For origins, the "name" is `scheme://host`. */
function splitOrigin(origin: string): { name: string; port?: string } | undefined {
  const match = /^([a-z][a-z0-9+.-]*):\/\/(.+)$/i.exec(origin.trim());
  if (match === null) return undefined;
  const host = splitHostPort(match[2]!);
  if (host === undefined) return undefined;
  const scheme = match[1]!.toLowerCase();
  const name = `${scheme}://${host.name}`;
  return host.port === undefined ? { name } : { name, port: host.port };
}

/** An Origin header value, with the scheme's default port made explicit. */
function originOfRequest(origin: string): { name: string; port?: string } | undefined {
  const parsed = splitOrigin(origin);
  if (parsed === undefined || parsed.port !== undefined) return parsed;
  const port = DEFAULT_PORTS[parsed.name.slice(0, parsed.name.indexOf(':'))];
  return port === undefined ? parsed : { ...parsed, port };
}

/** Parses a comma-separated list; an entry that does not parse is a configuration error. */
function parseList(text: string | undefined, split: (entry: string) => { name: string; port?: string } | undefined): Allowlist {
  const raw = (text ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  const entries = raw
    .filter((entry) => entry !== '*')
    .map((entry) => {
      const parsed = split(entry);
      if (parsed === undefined) throw new Error(`configuration: allowlist entry ${JSON.stringify(entry)} is not valid`);
      return parsed;
    });
  return { any: raw.includes('*'), entries };
}

export const parseHostAllowlist = (text: string | undefined) => parseList(text, splitHostPort);
export const parseOriginAllowlist = (text: string | undefined) => parseList(text, splitOrigin);

function matches(list: Allowlist, candidate: { name: string; port?: string } | undefined): boolean {
  if (list.any) return true;
  if (candidate === undefined) return false;
  return list.entries.some((entry) => entry.name === candidate.name && (entry.port === undefined || entry.port === candidate.port));
}

export function isHostAllowed(list: Allowlist, host: string | null): boolean {
  return host !== null && matches(list, splitHostPort(host.trim()));
}

/** An absent Origin is a non-browser client, which DNS rebinding cannot drive. */
export function isOriginAllowed(list: Allowlist, origin: string | null): boolean {
  return origin === null || matches(list, originOfRequest(origin));
}
