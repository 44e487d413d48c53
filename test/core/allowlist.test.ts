import { describe, expect, it } from 'vitest';
import { isHostAllowed, isLoopbackHostname, isOriginAllowed, parseHostAllowlist, parseOriginAllowlist } from '../../src/core/allowlist.ts';
import { DEFAULT_ALLOWED_HOSTS, DEFAULT_ALLOWED_ORIGINS } from '../../src/config.ts';

describe('parseHostAllowlist', () => {
  it.each([
    { name: 'no text as an empty list', text: undefined, list: { any: false, entries: [] } },
    { name: 'an empty string as an empty list', text: '', list: { any: false, entries: [] } },
    { name: 'a bare name as its default ports', text: 'localhost', list: { any: false, entries: [{ name: 'localhost' }] } },
    {
      name: 'a name with a port, lower-cased',
      text: 'LocalHost:8787',
      list: { any: false, entries: [{ name: 'localhost', port: '8787' }] },
    },
    { name: 'an IPv4 address', text: '127.0.0.1', list: { any: false, entries: [{ name: '127.0.0.1' }] } },
    { name: 'a bracketed IPv6 address', text: '[::1]', list: { any: false, entries: [{ name: '[::1]' }] } },
    { name: 'a bracketed IPv6 address with a port', text: '[::1]:8787', list: { any: false, entries: [{ name: '[::1]', port: '8787' }] } },
    { name: 'an upper-case IPv6 address, lower-cased', text: '[FE80::AB]', list: { any: false, entries: [{ name: '[fe80::ab]' }] } },
    { name: 'an IPv4-mapped IPv6 address', text: '[::ffff:127.0.0.1]', list: { any: false, entries: [{ name: '[::ffff:127.0.0.1]' }] } },
    {
      name: 'entries with whitespace and empty members',
      text: ' a.example , b.example:1 ,, ',
      list: { any: false, entries: [{ name: 'a.example' }, { name: 'b.example', port: '1' }] },
    },
    { name: 'the wildcard', text: '*', list: { any: true, entries: [] } },
    { name: 'the wildcard among names', text: 'localhost, *', list: { any: true, entries: [{ name: 'localhost' }] } },
    {
      name: 'the default list',
      text: DEFAULT_ALLOWED_HOSTS,
      list: {
        any: false,
        entries: [
          { name: 'localhost', port: '*' },
          { name: '127.0.0.1', port: '*' },
          { name: '[::1]', port: '*' },
        ],
      },
    },
  ])('parses $name', ({ text, list }) => {
    expect(parseHostAllowlist(text)).toEqual(list);
  });
});

describe('parseHostAllowlist refuses', () => {
  it.each(['http://localhost', 'local_host', 'a:b', '::1', 'localhost:123456', '[::1'])('the malformed entry %j', (entry) => {
    expect(() => parseHostAllowlist(`good.example,${entry}`)).toThrow(/configuration: allowlist entry/);
  });
});

describe('parseOriginAllowlist refuses', () => {
  it.each(['localhost', 'http://', 'http://a.example/path', 'http://a.example/', '://x', '1http://x'])(
    'the malformed entry %j',
    (entry) => {
      expect(() => parseOriginAllowlist(`https://ok.example,${entry}`)).toThrow(/configuration: allowlist entry/);
    },
  );
});

describe('origin entries with a default port', () => {
  it.each([
    ['https://app.example:443', 'https://app.example', true],
    ['http://app.example:80', 'http://app.example', true],
    ['https://app.example:443', 'http://app.example', false],
    ['https://app.example:8443', 'https://app.example', false],
  ])('%s admits Origin %s: %s', (entry, origin, allowed) => {
    expect(isOriginAllowed(parseOriginAllowlist(entry), origin)).toBe(allowed);
  });
});

describe('parseOriginAllowlist', () => {
  it.each([
    { name: 'no text as an empty list', text: undefined, list: { any: false, entries: [] } },
    { name: 'an origin without a port', text: 'http://localhost', list: { any: false, entries: [{ name: 'http://localhost' }] } },
    {
      name: 'an upper-case origin with a port, lower-cased',
      text: 'HTTP://LocalHost:6274',
      list: { any: false, entries: [{ name: 'http://localhost', port: '6274' }] },
    },
    {
      name: 'an IPv6 origin with a port',
      text: 'https://[::1]:443',
      list: { any: false, entries: [{ name: 'https://[::1]', port: '443' }] },
    },
    { name: 'the wildcard', text: '*', list: { any: true, entries: [] } },
    {
      name: 'the default list',
      text: DEFAULT_ALLOWED_ORIGINS,
      list: {
        any: false,
        entries: [
          { name: 'http://localhost', port: '*' },
          { name: 'http://127.0.0.1', port: '*' },
          { name: 'http://[::1]', port: '*' },
        ],
      },
    },
  ])('parses $name', ({ text, list }) => {
    expect(parseOriginAllowlist(text)).toEqual(list);
  });
});

describe('isHostAllowed', () => {
  const defaults = parseHostAllowlist(DEFAULT_ALLOWED_HOSTS);
  const portOnly = parseHostAllowlist('localhost:8787,[::1]:8787');
  const any = parseHostAllowlist('*');
  const none = parseHostAllowlist('');

  it.each([
    { name: 'localhost', list: defaults, host: 'localhost', allowed: true },
    { name: 'localhost on any port (localhost:*)', list: defaults, host: 'localhost:8787', allowed: true },
    { name: 'localhost in upper case', list: defaults, host: 'LOCALHOST:8787', allowed: true },
    { name: 'a surrounding-whitespace localhost', list: defaults, host: ' localhost ', allowed: true },
    { name: '127.0.0.1 on a port', list: defaults, host: '127.0.0.1:1', allowed: true },
    { name: '[::1] without a port', list: defaults, host: '[::1]', allowed: true },
    { name: '[::1] with a port', list: defaults, host: '[::1]:8787', allowed: true },
    { name: 'the long spelling of ::1 (no normalisation)', list: defaults, host: '[0:0:0:0:0:0:0:1]', allowed: false },
    { name: 'an unbracketed ::1', list: defaults, host: '::1', allowed: false },
    { name: 'an evil host', list: defaults, host: 'evil.example', allowed: false },
    { name: 'an evil host on an allowed port', list: defaults, host: 'evil.example:8787', allowed: false },
    { name: 'a name ending in localhost', list: defaults, host: 'notlocalhost', allowed: false },
    { name: 'a subdomain of an evil host named localhost', list: defaults, host: 'localhost.evil.example', allowed: false },
    { name: 'localhost with a trailing dot', list: defaults, host: 'localhost.', allowed: false },
    { name: 'localhost with userinfo', list: defaults, host: 'user@localhost', allowed: false },
    { name: 'localhost with an empty port', list: defaults, host: 'localhost:', allowed: false },
    { name: 'localhost with a non-numeric port', list: defaults, host: 'localhost:abc', allowed: false },
    { name: 'localhost with a six-digit port', list: defaults, host: 'localhost:123456', allowed: false },
    { name: 'an empty host', list: defaults, host: '', allowed: false },
    { name: 'an absent host', list: defaults, host: null, allowed: false },
    { name: 'the listed port of a port-specific entry', list: portOnly, host: 'localhost:8787', allowed: true },
    { name: 'the listed port of a port-specific IPv6 entry', list: portOnly, host: '[::1]:8787', allowed: true },
    { name: 'another port of a port-specific entry', list: portOnly, host: 'localhost:8788', allowed: false },
    { name: 'no port for a port-specific entry', list: portOnly, host: 'localhost', allowed: false },
    { name: 'any host under the wildcard', list: any, host: 'evil.example', allowed: true },
    { name: 'even a malformed host under the wildcard', list: any, host: 'not a host', allowed: true },
    { name: 'an absent host even under the wildcard', list: any, host: null, allowed: false },
    { name: 'localhost under an empty list', list: none, host: 'localhost', allowed: false },
  ])('$name: $allowed', ({ list, host, allowed }) => {
    expect(isHostAllowed(list, host)).toBe(allowed);
  });
});

describe('isOriginAllowed', () => {
  const defaults = parseOriginAllowlist(DEFAULT_ALLOWED_ORIGINS);
  const portOnly = parseOriginAllowlist('https://app.example:8443');
  const any = parseOriginAllowlist('*');
  const none = parseOriginAllowlist('');

  it.each([
    { name: 'an absent origin (a non-browser client)', list: defaults, origin: null, allowed: true },
    { name: 'an absent origin under an empty list', list: none, origin: null, allowed: true },
    { name: 'http://localhost', list: defaults, origin: 'http://localhost', allowed: true },
    { name: 'http://localhost on any port (http://localhost:*)', list: defaults, origin: 'http://localhost:6274', allowed: true },
    { name: 'an upper-case origin', list: defaults, origin: 'HTTP://LOCALHOST:6274', allowed: true },
    { name: 'http://127.0.0.1 on a port', list: defaults, origin: 'http://127.0.0.1:3000', allowed: true },
    { name: 'http://[::1] on a port', list: defaults, origin: 'http://[::1]:8080', allowed: true },
    { name: 'https://localhost (scheme not listed)', list: defaults, origin: 'https://localhost', allowed: false },
    { name: 'an evil origin', list: defaults, origin: 'http://evil.example', allowed: false },
    { name: 'an evil origin whose name starts with localhost', list: defaults, origin: 'http://localhost.evil.example', allowed: false },
    { name: 'the opaque origin "null"', list: defaults, origin: 'null', allowed: false },
    { name: 'an empty origin', list: defaults, origin: '', allowed: false },
    { name: 'an origin without a scheme', list: defaults, origin: 'localhost', allowed: false },
    { name: 'an origin with a path', list: defaults, origin: 'http://localhost/path', allowed: false },
    { name: 'an origin with userinfo', list: defaults, origin: 'http://evil@localhost', allowed: false },
    { name: 'the listed port of a port-specific entry', list: portOnly, origin: 'https://app.example:8443', allowed: true },
    { name: 'another port of a port-specific entry', list: portOnly, origin: 'https://app.example:443', allowed: false },
    { name: 'no port for a port-specific entry', list: portOnly, origin: 'https://app.example', allowed: false },
    { name: 'an evil origin under the wildcard', list: any, origin: 'http://evil.example', allowed: true },
    { name: '"null" under the wildcard', list: any, origin: 'null', allowed: true },
    { name: 'http://localhost under an empty list', list: none, origin: 'http://localhost', allowed: false },
  ])('$name: $allowed', ({ list, origin, allowed }) => {
    expect(isOriginAllowed(list, origin)).toBe(allowed);
  });
});

/**
 * The port an entry names (issue 42): an entry is the origins it admits, and an origin includes
 * its port. Without a port, an entry admits the default ports only (a Host without a port, or
 * :80 / :443; an Origin at its scheme's default port); `name:N` admits port N; `name:*` admits
 * any port, and says so. Were a bare name any port, a request at `mcp.example.com:9999` would
 * pass for a server meant for 443, and with AUTH=jwt and no MCP_RESOURCE its Host would make
 * `http://mcp.example.com:9999/mcp` an audience this server accepts.
 */
describe('the port an entry names', () => {
  it.each([
    { entry: 'mcp.example.com', host: 'mcp.example.com', allowed: true },
    { entry: 'mcp.example.com', host: 'mcp.example.com:443', allowed: true },
    { entry: 'mcp.example.com', host: 'mcp.example.com:80', allowed: true },
    { entry: 'mcp.example.com', host: 'mcp.example.com:9999', allowed: false },
    { entry: 'mcp.example.com', host: 'mcp.example.com:8443', allowed: false },
    { entry: '127.0.0.1', host: '127.0.0.1:9999', allowed: false },
    { entry: 'localhost', host: 'localhost:8787', allowed: false },
    { entry: '[::1]', host: '[::1]:8787', allowed: false },
    { entry: '[::1]', host: '[::1]', allowed: true },
    { entry: 'mcp.example.com:8443', host: 'mcp.example.com:8443', allowed: true },
    { entry: 'mcp.example.com:8443', host: 'mcp.example.com:443', allowed: false },
    { entry: 'mcp.example.com:8443', host: 'mcp.example.com', allowed: false },
    { entry: 'localhost:*', host: 'localhost', allowed: true },
    { entry: 'localhost:*', host: 'localhost:8787', allowed: true },
    { entry: 'localhost:*', host: 'LOCALHOST:1', allowed: true },
    { entry: 'localhost:*', host: 'evil.example:8787', allowed: false },
    { entry: 'localhost:*', host: 'localhost.evil.example', allowed: false },
    { entry: 'localhost:*', host: 'localhost:*', allowed: false },
    { entry: '[::1]:*', host: '[::1]:8798', allowed: true },
    { entry: '[::1]:*', host: '[::2]:8798', allowed: false },
    // The documented dev path: `npm run dev` (8787), the conformance runs (8797, 8798).
    { entry: DEFAULT_ALLOWED_HOSTS, host: 'localhost:8787', allowed: true },
    { entry: DEFAULT_ALLOWED_HOSTS, host: '127.0.0.1:8797', allowed: true },
    { entry: DEFAULT_ALLOWED_HOSTS, host: '[::1]:8798', allowed: true },
    { entry: DEFAULT_ALLOWED_HOSTS, host: 'localhost', allowed: true },
  ])('Host entry $entry admits $host: $allowed', ({ entry, host, allowed }) => {
    expect(isHostAllowed(parseHostAllowlist(entry), host)).toBe(allowed);
  });

  it.each([
    { entry: 'https://app.example', origin: 'https://app.example', allowed: true },
    { entry: 'https://app.example', origin: 'https://app.example:443', allowed: true },
    { entry: 'https://app.example', origin: 'https://app.example:8443', allowed: false },
    { entry: 'http://app.example', origin: 'http://app.example:443', allowed: false },
    { entry: 'http://localhost', origin: 'http://localhost:6274', allowed: false },
    { entry: 'http://localhost', origin: 'http://localhost', allowed: true },
    { entry: 'http://localhost:*', origin: 'http://localhost:6274', allowed: true },
    { entry: 'http://localhost:*', origin: 'http://localhost', allowed: true },
    { entry: 'http://localhost:*', origin: 'https://localhost:6274', allowed: false },
    { entry: 'http://[::1]:*', origin: 'http://[::1]:8080', allowed: true },
    { entry: 'http://localhost:*', origin: 'http://localhost:*', allowed: false },
    // MCP Inspector's origin under the defaults.
    { entry: DEFAULT_ALLOWED_ORIGINS, origin: 'http://localhost:6274', allowed: true },
    { entry: DEFAULT_ALLOWED_ORIGINS, origin: 'http://127.0.0.1:8787', allowed: true },
    { entry: DEFAULT_ALLOWED_ORIGINS, origin: 'https://localhost:6274', allowed: false },
  ])('Origin entry $entry admits $origin: $allowed', ({ entry, origin, allowed }) => {
    expect(isOriginAllowed(parseOriginAllowlist(entry), origin)).toBe(allowed);
  });

  it.each([
    { text: 'localhost:*', list: { any: false, entries: [{ name: 'localhost', port: '*' }] } },
    { text: '[::1]:*', list: { any: false, entries: [{ name: '[::1]', port: '*' }] } },
  ])('parses the any-port host entry $text', ({ text, list }) => {
    expect(parseHostAllowlist(text)).toEqual(list);
  });

  it('parses the any-port origin entry http://localhost:*', () => {
    expect(parseOriginAllowlist('http://localhost:*')).toEqual({ any: false, entries: [{ name: 'http://localhost', port: '*' }] });
  });

  it.each(['localhost:**', ':*', '*:80', 'local*host', 'localhost:*8', '*.example.com'])('refuses the host entry %j', (entry) => {
    expect(() => parseHostAllowlist(entry)).toThrow(/configuration: allowlist entry/);
  });
});

/** Where the demo's sign-in page may serve (auth/consent-page.ts): a URL's hostname, as `new URL` writes it. */
describe('isLoopbackHostname', () => {
  it.each([
    { url: 'http://localhost:8787/mcp', loopback: true },
    { url: 'http://LOCALHOST/mcp', loopback: true },
    { url: 'http://127.0.0.1/mcp', loopback: true },
    { url: 'http://127.255.255.254:1/', loopback: true },
    { url: 'http://127.1/', loopback: true },
    { url: 'http://0x7f000001/', loopback: true },
    { url: 'http://[::1]:8787/', loopback: true },
    { url: 'http://[0:0:0:0:0:0:0:1]/', loopback: true },
    { url: 'http://128.0.0.1/', loopback: false },
    { url: 'http://10.0.0.1/', loopback: false },
    { url: 'http://0.0.0.0/', loopback: false },
    { url: 'http://[::ffff:127.0.0.1]/', loopback: false },
    { url: 'http://[::2]/', loopback: false },
    { url: 'http://127.0.0.1.evil.example/', loopback: false },
    { url: 'http://localhost.evil.example/', loopback: false },
    { url: 'http://app.localhost/', loopback: false },
    { url: 'https://mcp.example.com/mcp', loopback: false },
  ])('$url: $loopback', ({ url, loopback }) => {
    expect(isLoopbackHostname(new URL(url).hostname)).toBe(loopback);
  });

  it.each(['127.0.0.256', '127.0.0', '127.0.0.1 ', 'localhost.'])('refuses the unnormalised %j', (hostname) => {
    expect(isLoopbackHostname(hostname)).toBe(false);
  });
});
