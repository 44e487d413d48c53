/**
 * Host and Origin allowlists: the transport spec's DNS-rebinding defence.
 * 2025-11-25 transports: "Servers MUST validate the Origin header on all incoming
 * connections to prevent DNS rebinding attacks. If the Origin header is present and
 * invalid, servers MUST respond with HTTP 403 Forbidden."
 *
 * Entries are comma-separated; `*` alone matches everything. An entry names a host (or an
 * origin) and the ports it is served at:
 * - without a port, the default ports only: a Host without a port, `:80` or `:443`; an Origin
 *   at its scheme's default port (`https://app.example` is `https://app.example:443`);
 * - `name:8787`, that port alone;
 * - `name:*`, every port of that name (`localhost:*`, `http://localhost:*`: the defaults, so
 *   that `npm run dev`, the conformance runs and MCP Inspector's page work on any local port).
 *
 * Why a bare name is not every port (issue 42): a port is part of an origin, and another port of
 * the same name is another server. With AUTH=jwt and no MCP_RESOURCE, the audience a token must
 * carry is the endpoint's URL at the request's Host (auth/authenticate.ts): were `mcp.example.com`
 * every port, `Host: mcp.example.com:9999` would make this server accept a token its issuer
 * minted for the resource at port 9999. Narrowing the entry, not the audience, keeps one rule
 * for every check that reads the Host (the walls, the audience, the metadata's `resource`), and
 * fails closed: a port nobody listed is 403, naming the entry that would admit it.
 * `name:*` is the operator saying that every port of the name is this one server.
 */
export interface Allowlist {
  readonly any: boolean;
  /** `port`: absent for the default ports, {@link ANY_PORT} for every port, else the one port. */
  readonly entries: readonly { readonly name: string; readonly port?: string }[];
}

/** The port of an entry that admits every port of its name (`localhost:*`). */
export const ANY_PORT = '*';

interface HostPort {
  readonly name: string;
  readonly port?: string;
}

/** `name[:port]`: a bracketed IPv6 address or a DNS name or IPv4 address; an entry's port may be `*`. */
const REQUEST_HOST = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(?::([0-9]{1,5}))?$/;
const ENTRY_HOST = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(?::([0-9]{1,5}|\*))?$/;

/**
 * `name[:port]`, lower-cased. `anyPort`: whether `:*` is a port (in an entry, never in a request:
 * a Host `localhost:*` is malformed, not every port).
 */
function splitHostPort(host: string, anyPort: boolean): HostPort | undefined {
  const match = (anyPort ? ENTRY_HOST : REQUEST_HOST).exec(host);
  if (match === null) return undefined;
  const name = match[1]!.toLowerCase();
  return match[2] === undefined ? { name } : { name, port: match[2] };
}

/** Browsers omit the scheme's default port from Origin; an entry may still spell it out. */
const DEFAULT_PORTS: Readonly<Record<string, string>> = { http: '80', https: '443' };

/** A Host names no scheme: an entry without a port admits it without one, or at either default port. */
const HOST_DEFAULT_PORTS: readonly (string | undefined)[] = [undefined, '80', '443'];

/** For origins, the "name" is `scheme://host`. */
function splitOrigin(origin: string, anyPort: boolean): HostPort | undefined {
  const match = /^([a-z][a-z0-9+.-]*):\/\/(.+)$/i.exec(origin.trim());
  if (match === null) return undefined;
  const host = splitHostPort(match[2]!, anyPort);
  if (host === undefined) return undefined;
  const scheme = match[1]!.toLowerCase();
  const name = `${scheme}://${host.name}`;
  return host.port === undefined ? { name } : { name, port: host.port };
}

const schemeOf = (origin: string) => origin.slice(0, origin.indexOf(':'));

/** An Origin header value, with the scheme's default port made explicit. */
function originOfRequest(origin: string): HostPort | undefined {
  const parsed = splitOrigin(origin, false);
  if (parsed === undefined || parsed.port !== undefined) return parsed;
  const port = DEFAULT_PORTS[schemeOf(parsed.name)];
  return port === undefined ? parsed : { ...parsed, port };
}

/** The ports an Origin entry without one admits: its scheme's default (made explicit by originOfRequest), else none. */
const originDefaultPorts = (name: string): readonly (string | undefined)[] => [DEFAULT_PORTS[schemeOf(name)]];

/** Parses a comma-separated list; an entry that does not parse is a configuration error. */
function parseList(text: string | undefined, split: (entry: string) => HostPort | undefined): Allowlist {
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

export const parseHostAllowlist = (text: string | undefined) => parseList(text, (entry) => splitHostPort(entry, true));
export const parseOriginAllowlist = (text: string | undefined) => parseList(text, (entry) => splitOrigin(entry, true));

function matches(
  list: Allowlist,
  candidate: HostPort | undefined,
  defaultPorts: (name: string) => readonly (string | undefined)[],
): boolean {
  if (list.any) return true;
  if (candidate === undefined) return false;
  return list.entries.some(
    (entry) =>
      entry.name === candidate.name &&
      (entry.port === ANY_PORT ||
        entry.port === candidate.port ||
        (entry.port === undefined && defaultPorts(candidate.name).includes(candidate.port))),
  );
}

export function isHostAllowed(list: Allowlist, host: string | null): boolean {
  return host !== null && matches(list, splitHostPort(host.trim(), false), () => HOST_DEFAULT_PORTS);
}

/** An absent Origin is a non-browser client, which DNS rebinding cannot drive. */
export function isOriginAllowed(list: Allowlist, origin: string | null): boolean {
  return origin === null || matches(list, originOfRequest(origin), originDefaultPorts);
}

/**
 * For a refused value whose name the list holds at other ports: the entries that would admit
 * it, its own port's and every port's (`localhost:8787`, `localhost:*`), for the refusal to
 * name. Undefined when the name is not listed at all (then the value itself is what to add).
 */
function entriesAdmitting(list: Allowlist, candidate: HostPort | undefined): readonly [string, string] | undefined {
  if (candidate?.port === undefined || !list.entries.some((entry) => entry.name === candidate.name)) return undefined;
  return [`${candidate.name}:${candidate.port}`, `${candidate.name}:${ANY_PORT}`];
}

export const hostEntriesAdmitting = (list: Allowlist, host: string | null) =>
  host === null ? undefined : entriesAdmitting(list, splitHostPort(host.trim(), false));

export const originEntriesAdmitting = (list: Allowlist, origin: string | null) =>
  origin === null ? undefined : entriesAdmitting(list, originOfRequest(origin));

/**
 * Whether a URL's hostname (`new URL(…).hostname`: lower-cased, an IPv4 address in dotted
 * decimal, IPv6 bracketed and compressed) is this machine's: `localhost`, 127.0.0.0/8 or
 * `[::1]`. Nothing else counts, not even a name that resolves there (`*.localhost`, a DNS
 * name): the question is whether the URL can only be reached from the machine itself.
 */
export function isLoopbackHostname(hostname: string): boolean {
  if (hostname === 'localhost' || hostname === '[::1]') return true;
  const octets = /^127\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(hostname);
  return octets?.slice(1).every((octet) => Number(octet) <= 255) === true;
}

/**
 * Whether a URL the server sends secrets or tokens to is safe to: https, or http to this machine
 * (a loopback host), where nothing crosses a network — a provider run beside the Worker in
 * development.
 */
export const isHttpsOrLoopback = (url: URL): boolean =>
  url.protocol === 'https:' || (url.protocol === 'http:' && isLoopbackHostname(url.hostname));
