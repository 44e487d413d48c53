import { describe, expect, it } from 'vitest';
import { variableProblem } from '../../src/core/misconfiguration.ts';
import {
  CALLBACK_URL_REFUSALS,
  type CallbackUrlPolicy,
  type CallbackUrlRefusal,
  checkCallbackUrl,
  DevOriginsError,
  MAX_CALLBACK_URL_LENGTH,
  parseDevOrigins,
} from '../../src/core/webhook-url.ts';

/** A deployed Worker with no development origins: the production policy. */
const DEPLOYED: CallbackUrlPolicy = { devOrigins: [], serverOrigin: 'https://mcp.example.com' };

const DEV_ORIGINS = parseDevOrigins(
  'http://127.0.0.1:8788, http://localhost:9000,http://[::1]:7000,https://localhost:8443,http://localhost',
);
/** `wrangler dev` with a receiver on this machine. */
const LOCAL: CallbackUrlPolicy = { devOrigins: DEV_ORIGINS, serverOrigin: 'http://127.0.0.1:8787' };

const at = (host: string) => `https://${host}/hooks/mcp`;

const publicUrls: { name: string; url: string; href: string }[] = [
  { name: 'a public name', url: 'https://hooks.example.com/mcp', href: 'https://hooks.example.com/mcp' },
  { name: 'a port', url: 'https://hooks.example.com:8443/mcp', href: 'https://hooks.example.com:8443/mcp' },
  { name: 'the default port, dropped', url: 'https://hooks.example.com:443/mcp', href: 'https://hooks.example.com/mcp' },
  { name: 'a query (a routing token)', url: 'https://hooks.example.com/mcp?tenant=7', href: 'https://hooks.example.com/mcp?tenant=7' },
  { name: 'an empty query', url: 'https://hooks.example.com/mcp?', href: 'https://hooks.example.com/mcp?' },
  { name: 'capitals, lower-cased', url: 'HTTPS://Hooks.EXAMPLE.com/MCP', href: 'https://hooks.example.com/MCP' },
  { name: 'no path', url: 'https://hooks.example.com', href: 'https://hooks.example.com/' },
  { name: 'an internationalized name, as punycode', url: 'https://bücher.example/h', href: 'https://xn--bcher-kva.example/h' },
  { name: 'surrounding spaces, trimmed', url: '  https://hooks.example.com/mcp  ', href: 'https://hooks.example.com/mcp' },
  { name: 'a name starting with localhost', url: at('localhost.example.com'), href: at('localhost.example.com') },
  { name: 'a name ending in localhost without a dot', url: at('notlocalhost'), href: at('notlocalhost') },
  { name: 'a trailing-dot public name', url: at('hooks.example.com.'), href: at('hooks.example.com.') },
  { name: 'a public IPv4 literal', url: at('8.8.8.8'), href: at('8.8.8.8') },
  { name: 'a public IPv4 literal as one number', url: at('134744072'), href: at('8.8.8.8') },
  { name: 'a public IPv4 literal in hex', url: at('0x08080808'), href: at('8.8.8.8') },
  { name: '1.0.0.0, after 0/8', url: at('1.0.0.0'), href: at('1.0.0.0') },
  { name: '100.128.0.0, after 100.64/10', url: at('100.128.0.0'), href: at('100.128.0.0') },
  { name: '172.32.0.0, after 172.16/12', url: at('172.32.0.0'), href: at('172.32.0.0') },
  { name: '198.20.0.0, after 198.18/15', url: at('198.20.0.0'), href: at('198.20.0.0') },
  { name: '223.255.255.255, before multicast', url: at('223.255.255.255'), href: at('223.255.255.255') },
  { name: 'a public IPv6 literal', url: at('[2606:4700:4700::1111]'), href: at('[2606:4700:4700::1111]') },
  { name: 'a public IPv6 literal in full', url: at('[2001:4860:4860:0:0:0:0:8888]'), href: at('[2001:4860:4860::8888]') },
  { name: 'IPv4-mapped public', url: at('[::ffff:8.8.8.8]'), href: at('[::ffff:808:808]') },
  { name: 'NAT64 of a public address', url: at('[64:ff9b::8.8.8.8]'), href: at('[64:ff9b::808:808]') },
];

describe('checkCallbackUrl passes a public https URL, canonicalized', () => {
  it.each(publicUrls)('$name', ({ url, href }) => {
    const check = checkCallbackUrl(url, DEPLOYED);
    expect(check).toMatchObject({ ok: true });
    expect(check.ok && check.url.href).toBe(href);
  });

  it.each(publicUrls)('$name, with development origins on a loopback Worker too', ({ url }) => {
    expect(checkCallbackUrl(url, LOCAL).ok).toBe(true);
  });
});

const refusedUrls: { name: string; url: string; reason: CallbackUrlRefusal }[] = [
  // Not a URL.
  { name: 'an empty string', url: '', reason: 'malformed_url' },
  { name: 'a relative URL', url: 'hooks.example.com/mcp', reason: 'malformed_url' },
  { name: 'a path alone', url: '/hooks/mcp', reason: 'malformed_url' },
  { name: 'https:// without a host', url: 'https://', reason: 'malformed_url' },
  { name: 'an unclosed IPv6 literal', url: 'https://[::1/mcp', reason: 'malformed_url' },
  { name: 'an IPv6 literal with a zone id', url: 'https://[fe80::1%25eth0]/mcp', reason: 'malformed_url' },
  { name: 'a space in the host', url: 'https://hooks example.com/mcp', reason: 'malformed_url' },
  { name: 'an IPv4 part over 255', url: 'https://127.0.0.256/mcp', reason: 'malformed_url' },
  { name: 'a port over 65535', url: 'https://hooks.example.com:65536/mcp', reason: 'malformed_url' },
  // Too long, as given or once percent-encoded.
  { name: 'a URL over the bound', url: `https://hooks.example.com/${'a'.repeat(MAX_CALLBACK_URL_LENGTH)}`, reason: 'too_long' },
  {
    name: 'a short URL padded past the bound',
    url: `https://hooks.example.com/mcp${' '.repeat(MAX_CALLBACK_URL_LENGTH)}`,
    reason: 'too_long',
  },
  { name: 'a URL over the bound once encoded', url: `https://hooks.example.com/${'é'.repeat(400)}`, reason: 'too_long' },
  // Credentials.
  { name: 'a user name', url: 'https://user@hooks.example.com/mcp', reason: 'credentials_in_url' },
  { name: 'a user name and a password', url: 'https://user:secret@hooks.example.com/mcp', reason: 'credentials_in_url' },
  { name: 'a password alone', url: 'https://:secret@hooks.example.com/mcp', reason: 'credentials_in_url' },
  // A fragment, even an empty one.
  { name: 'a fragment', url: 'https://hooks.example.com/mcp#one', reason: 'fragment' },
  { name: 'an empty fragment', url: 'https://hooks.example.com/mcp#', reason: 'fragment' },
  { name: 'a query and a fragment', url: 'https://hooks.example.com/mcp?a=1#two', reason: 'fragment' },
  // Any scheme but https.
  { name: 'http', url: 'http://hooks.example.com/mcp', reason: 'not_https' },
  { name: 'HTTP in capitals', url: 'HTTP://hooks.example.com/mcp', reason: 'not_https' },
  { name: 'ws', url: 'ws://hooks.example.com/mcp', reason: 'not_https' },
  { name: 'wss', url: 'wss://hooks.example.com/mcp', reason: 'not_https' },
  { name: 'ftp', url: 'ftp://hooks.example.com/mcp', reason: 'not_https' },
  { name: 'file', url: 'file:///etc/passwd', reason: 'not_https' },
  { name: 'data', url: 'data:text/plain,hello', reason: 'not_https' },
  { name: 'javascript', url: 'javascript:alert(1)', reason: 'not_https' },
  { name: 'a scheme-like prefix', url: 'https-evil://hooks.example.com/mcp', reason: 'not_https' },
  { name: 'http to loopback outside the development origins', url: 'http://127.0.0.1:8799/mcp', reason: 'not_https' },
  // IPv4 loopback, in every spelling the URL parser reads as it.
  { name: '127.0.0.1', url: at('127.0.0.1'), reason: 'special_purpose_address' },
  { name: '127.0.0.1 with a port', url: 'https://127.0.0.1:8443/mcp', reason: 'special_purpose_address' },
  { name: '127.255.255.254', url: at('127.255.255.254'), reason: 'special_purpose_address' },
  { name: '127.1 (two parts)', url: at('127.1'), reason: 'special_purpose_address' },
  { name: '127.0.1 (three parts)', url: at('127.0.1'), reason: 'special_purpose_address' },
  { name: '2130706433 (one decimal number)', url: at('2130706433'), reason: 'special_purpose_address' },
  { name: '0x7f000001 (one hex number)', url: at('0x7f000001'), reason: 'special_purpose_address' },
  { name: '0X7F.1 (hex in capitals, two parts)', url: at('0X7F.1'), reason: 'special_purpose_address' },
  { name: '0177.0.0.1 (an octal part)', url: at('0177.0.0.1'), reason: 'special_purpose_address' },
  { name: '017700000001 (one octal number)', url: at('017700000001'), reason: 'special_purpose_address' },
  { name: '0x7f.0.0.0x1 (hex parts)', url: at('0x7f.0.0.0x1'), reason: 'special_purpose_address' },
  { name: '127.0.0.1. (a trailing dot)', url: at('127.0.0.1.'), reason: 'special_purpose_address' },
  { name: 'percent-encoded digits', url: at('%31%32%37.0.0.1'), reason: 'special_purpose_address' },
  { name: 'full-width digits', url: at('１２７.０.０.１'), reason: 'special_purpose_address' },
  { name: 'ideographic full stops', url: at('127。0。0。1'), reason: 'special_purpose_address' },
  // IPv4 special-purpose blocks, at their edges.
  { name: '0.0.0.0', url: at('0.0.0.0'), reason: 'special_purpose_address' },
  { name: '0 (one number)', url: at('0'), reason: 'special_purpose_address' },
  { name: '0.255.255.255', url: at('0.255.255.255'), reason: 'special_purpose_address' },
  { name: '10.0.0.0', url: at('10.0.0.0'), reason: 'special_purpose_address' },
  { name: '10.255.255.255', url: at('10.255.255.255'), reason: 'special_purpose_address' },
  { name: '012.0.0.1 (10.0.0.1 in octal)', url: at('012.0.0.1'), reason: 'special_purpose_address' },
  { name: '167772161 (10.0.0.1 as one number)', url: at('167772161'), reason: 'special_purpose_address' },
  { name: '100.64.0.0 (CGNAT)', url: at('100.64.0.0'), reason: 'special_purpose_address' },
  { name: '100.127.255.255 (CGNAT)', url: at('100.127.255.255'), reason: 'special_purpose_address' },
  { name: '169.254.0.1 (link-local)', url: at('169.254.0.1'), reason: 'special_purpose_address' },
  { name: '169.254.169.254 (cloud metadata)', url: at('169.254.169.254'), reason: 'special_purpose_address' },
  { name: '0xa9fea9fe (cloud metadata in hex)', url: at('0xa9fea9fe'), reason: 'special_purpose_address' },
  { name: '2852039166 (cloud metadata as one number)', url: at('2852039166'), reason: 'special_purpose_address' },
  { name: '169.254.43518 (cloud metadata, three parts)', url: at('169.254.43518'), reason: 'special_purpose_address' },
  { name: '172.16.0.0', url: at('172.16.0.0'), reason: 'special_purpose_address' },
  { name: '172.31.255.255', url: at('172.31.255.255'), reason: 'special_purpose_address' },
  { name: '192.0.0.8 (IETF assignments)', url: at('192.0.0.8'), reason: 'special_purpose_address' },
  { name: '192.0.2.1 (TEST-NET-1)', url: at('192.0.2.1'), reason: 'special_purpose_address' },
  { name: '192.88.99.1 (6to4 relay)', url: at('192.88.99.1'), reason: 'special_purpose_address' },
  { name: '192.168.0.1', url: at('192.168.0.1'), reason: 'special_purpose_address' },
  { name: '192.168.255.255', url: at('192.168.255.255'), reason: 'special_purpose_address' },
  { name: '198.18.0.0 (benchmarking)', url: at('198.18.0.0'), reason: 'special_purpose_address' },
  { name: '198.19.255.255 (benchmarking)', url: at('198.19.255.255'), reason: 'special_purpose_address' },
  { name: '198.51.100.7 (TEST-NET-2)', url: at('198.51.100.7'), reason: 'special_purpose_address' },
  { name: '203.0.113.7 (TEST-NET-3)', url: at('203.0.113.7'), reason: 'special_purpose_address' },
  { name: '224.0.0.1 (multicast)', url: at('224.0.0.1'), reason: 'special_purpose_address' },
  { name: '239.255.255.250 (multicast)', url: at('239.255.255.250'), reason: 'special_purpose_address' },
  { name: '240.0.0.1 (reserved)', url: at('240.0.0.1'), reason: 'special_purpose_address' },
  { name: '255.255.255.255 (broadcast)', url: at('255.255.255.255'), reason: 'special_purpose_address' },
  { name: '0xffffffff (broadcast as one number)', url: at('0xffffffff'), reason: 'special_purpose_address' },
  // IPv6 loopback, unspecified and the blocks outside global unicast.
  { name: '[::1]', url: at('[::1]'), reason: 'special_purpose_address' },
  { name: '[::1] with a port', url: 'https://[::1]:8443/mcp', reason: 'special_purpose_address' },
  { name: '[0:0:0:0:0:0:0:1] in full', url: at('[0:0:0:0:0:0:0:1]'), reason: 'special_purpose_address' },
  { name: '[::]', url: at('[::]'), reason: 'special_purpose_address' },
  { name: '[::127.0.0.1] (IPv4-compatible)', url: at('[::127.0.0.1]'), reason: 'special_purpose_address' },
  { name: '[::8.8.8.8] (IPv4-compatible, deprecated even for a public one)', url: at('[::8.8.8.8]'), reason: 'special_purpose_address' },
  { name: '[fc00::1] (unique-local)', url: at('[fc00::1]'), reason: 'special_purpose_address' },
  { name: '[fdff:ffff::1] (unique-local)', url: at('[fdff:ffff::1]'), reason: 'special_purpose_address' },
  { name: '[fe80::1] (link-local)', url: at('[fe80::1]'), reason: 'special_purpose_address' },
  { name: '[febf:ffff::1] (top of link-local)', url: at('[febf:ffff::1]'), reason: 'special_purpose_address' },
  { name: '[fec0::1] (site-local)', url: at('[fec0::1]'), reason: 'special_purpose_address' },
  { name: '[ff02::1] (multicast)', url: at('[ff02::1]'), reason: 'special_purpose_address' },
  { name: '[FF05::1:3] (multicast, capitals)', url: at('[FF05::1:3]'), reason: 'special_purpose_address' },
  { name: '[100::1] (discard-only)', url: at('[100::1]'), reason: 'special_purpose_address' },
  { name: '[64:ff9b:1::1] (local-use translation)', url: at('[64:ff9b:1::1]'), reason: 'special_purpose_address' },
  // IPv6 forms that carry a special IPv4 address.
  { name: '[::ffff:127.0.0.1] (IPv4-mapped)', url: at('[::ffff:127.0.0.1]'), reason: 'special_purpose_address' },
  { name: '[::ffff:7f00:1] (IPv4-mapped, hex)', url: at('[::ffff:7f00:1]'), reason: 'special_purpose_address' },
  { name: '[::ffff:10.0.0.1] (IPv4-mapped private)', url: at('[::ffff:10.0.0.1]'), reason: 'special_purpose_address' },
  { name: '[::ffff:169.254.169.254] (IPv4-mapped metadata)', url: at('[::ffff:169.254.169.254]'), reason: 'special_purpose_address' },
  { name: '[::ffff:0:192.168.1.1] (SIIT)', url: at('[::ffff:0:192.168.1.1]'), reason: 'special_purpose_address' },
  { name: '[64:ff9b::127.0.0.1] (NAT64)', url: at('[64:ff9b::127.0.0.1]'), reason: 'special_purpose_address' },
  { name: '[64:ff9b::a9fe:a9fe] (NAT64 of the metadata address)', url: at('[64:ff9b::a9fe:a9fe]'), reason: 'special_purpose_address' },
  { name: '[64:ff9b::c0a8:101] (NAT64 of 192.168.1.1)', url: at('[64:ff9b::c0a8:101]'), reason: 'special_purpose_address' },
  // IPv6 special-purpose blocks inside 2000::/3.
  { name: '[2002:7f00:1::1] (6to4 of 127.0.0.1)', url: at('[2002:7f00:1::1]'), reason: 'special_purpose_address' },
  { name: '[2002:c0a8:101::1] (6to4 of 192.168.1.1)', url: at('[2002:c0a8:101::1]'), reason: 'special_purpose_address' },
  { name: '[2002:808:808::1] (6to4, even of a public address)', url: at('[2002:808:808::1]'), reason: 'special_purpose_address' },
  { name: '[2001::1] (Teredo)', url: at('[2001::1]'), reason: 'special_purpose_address' },
  {
    name: '[2001:0:4136:e378:8000:63bf:3fff:fdd2] (Teredo)',
    url: at('[2001:0:4136:e378:8000:63bf:3fff:fdd2]'),
    reason: 'special_purpose_address',
  },
  { name: '[2001:2::1] (benchmarking)', url: at('[2001:2::1]'), reason: 'special_purpose_address' },
  { name: '[2001:db8::1] (documentation)', url: at('[2001:db8::1]'), reason: 'special_purpose_address' },
  { name: '[3fff::1] (documentation)', url: at('[3fff::1]'), reason: 'special_purpose_address' },
  // Names that never leave the machine or its network.
  { name: 'localhost', url: at('localhost'), reason: 'local_name' },
  { name: 'localhost with a port', url: 'https://localhost:8444/mcp', reason: 'local_name' },
  { name: 'LOCALHOST in capitals', url: at('LOCALHOST'), reason: 'local_name' },
  { name: 'localhost. (a trailing dot)', url: at('localhost.'), reason: 'local_name' },
  { name: 'localhost.. (two trailing dots)', url: at('localhost..'), reason: 'local_name' },
  { name: 'a name under .localhost', url: at('app.localhost'), reason: 'local_name' },
  { name: 'a name under .localhost, trailing dot', url: at('a.b.localhost.'), reason: 'local_name' },
  { name: 'a percent-encoded localhost', url: at('%6c%6f%63%61%6c%68%6f%73%74'), reason: 'local_name' },
  { name: 'a full-width localhost', url: at('ｌｏｃａｌｈｏｓｔ'), reason: 'local_name' },
  { name: 'an mDNS name', url: at('printer.local'), reason: 'local_name' },
  { name: 'a home.arpa name', url: at('router.home.arpa'), reason: 'local_name' },
  { name: 'an .internal name', url: at('svc.internal'), reason: 'local_name' },
];

describe('checkCallbackUrl refuses', () => {
  it.each(refusedUrls)('$name: $reason', ({ url, reason }) => {
    const check = checkCallbackUrl(url, DEPLOYED);
    expect(check).toMatchObject({ ok: false, reason });
    expect(!check.ok && check.detail).toMatch(/^delivery\.url /);
  });

  // The exception is the dev origins' only: with them configured and the Worker on loopback, every other refusal stands.
  it.each(refusedUrls)('$name: $reason, on a loopback Worker with development origins too', ({ url, reason }) => {
    expect(checkCallbackUrl(url, LOCAL)).toMatchObject({ ok: false, reason });
  });

  it('covers every refusal in the tables', () => {
    const seen = new Set([...refusedUrls, ...devRefusals].map(({ reason }) => reason).concat(OFF_LOOPBACK));
    expect([...seen].sort()).toEqual([...CALLBACK_URL_REFUSALS].sort());
  });

  it('says why a literal is refused in its detail', () => {
    expect(checkCallbackUrl(at('0xa9fea9fe'), DEPLOYED)).toMatchObject({ detail: expect.stringContaining('169.254.169.254') });
  });
});

/** What a Worker not on loopback answers for a dev origin (the last table below). */
const OFF_LOOPBACK: CallbackUrlRefusal = 'dev_origin_off_loopback';

const LOOPBACK_SERVERS = ['http://127.0.0.1:8787', 'http://localhost:8787', 'http://[::1]:8787', 'http://127.9.9.9', 'https://localhost'];

const devUrls: { name: string; url: string; href: string }[] = [
  { name: 'http at 127.0.0.1:8788', url: 'http://127.0.0.1:8788/hooks', href: 'http://127.0.0.1:8788/hooks' },
  { name: 'http at localhost:9000', url: 'http://localhost:9000/hooks?x=1', href: 'http://localhost:9000/hooks?x=1' },
  { name: 'http at [::1]:7000', url: 'http://[::1]:7000/', href: 'http://[::1]:7000/' },
  { name: 'http at localhost, port 80', url: 'http://localhost:80/h', href: 'http://localhost/h' },
  { name: 'https at localhost:8443', url: 'https://localhost:8443/h', href: 'https://localhost:8443/h' },
  { name: 'the same origin spelled 127.1', url: 'http://127.1:8788/hooks', href: 'http://127.0.0.1:8788/hooks' },
  { name: 'the same origin spelled in hex', url: 'http://0x7f000001:8788/hooks', href: 'http://127.0.0.1:8788/hooks' },
  { name: 'the same origin in capitals', url: 'HTTP://LOCALHOST:9000/hooks', href: 'http://localhost:9000/hooks' },
  { name: 'the same origin, [::1] in full', url: 'http://[0:0:0:0:0:0:0:1]:7000/h', href: 'http://[::1]:7000/h' },
];

const devRefusals: { name: string; url: string; reason: CallbackUrlRefusal }[] = [
  { name: 'another port', url: 'http://127.0.0.1:8789/hooks', reason: 'not_https' },
  { name: 'another loopback address', url: 'http://127.0.0.2:8788/hooks', reason: 'not_https' },
  { name: 'another name for the same address', url: 'http://localhost:8788/hooks', reason: 'not_https' },
  { name: 'localhost with a trailing dot', url: 'http://localhost.:9000/hooks', reason: 'not_https' },
  { name: 'https where http is listed', url: 'https://127.0.0.1:8788/hooks', reason: 'special_purpose_address' },
  { name: 'a name that extends a listed one', url: 'http://localhost.evil.example/hooks', reason: 'not_https' },
  { name: 'another port of a listed portless origin', url: 'http://localhost:81/hooks', reason: 'not_https' },
  { name: 'http where https is listed', url: 'http://localhost:8443/hooks', reason: 'not_https' },
  { name: 'credentials at a listed origin', url: 'http://u:p@127.0.0.1:8788/hooks', reason: 'credentials_in_url' },
  { name: 'a fragment at a listed origin', url: 'http://127.0.0.1:8788/hooks#x', reason: 'fragment' },
  { name: 'ws at a listed host and port', url: 'ws://127.0.0.1:8788/hooks', reason: 'not_https' },
];

describe('WEBHOOK_DEV_ORIGINS: the development-only exception to https', () => {
  describe.each(LOOPBACK_SERVERS)('on a Worker at %s', (serverOrigin) => {
    const policy = { devOrigins: DEV_ORIGINS, serverOrigin };
    it.each(devUrls)('passes $name', ({ url, href }) => {
      const check = checkCallbackUrl(url, policy);
      expect(check).toMatchObject({ ok: true });
      expect(check.ok && check.url.href).toBe(href);
    });
    it.each(devRefusals)('refuses $name: $reason', ({ url, reason }) => {
      expect(checkCallbackUrl(url, policy)).toMatchObject({ ok: false, reason });
    });
  });

  describe.each([
    'https://mcp.example.com',
    'http://mcp.example.com:8787',
    'http://localhost.example.com:8787',
    'http://app.localhost:8787',
    'http://0.0.0.0:8787',
    'http://10.0.0.5:8787',
    'http://[::ffff:127.0.0.1]:8787',
    '',
    'not an origin',
  ])('on a Worker at %j (not loopback)', (serverOrigin) => {
    const policy = { devOrigins: DEV_ORIGINS, serverOrigin };
    it.each(devUrls)('refuses $name: dev_origin_off_loopback', ({ url }) => {
      expect(checkCallbackUrl(url, policy)).toMatchObject({ ok: false, reason: OFF_LOOPBACK });
    });
    it('still passes a public https URL', () => {
      expect(checkCallbackUrl('https://hooks.example.com/mcp', policy).ok).toBe(true);
    });
  });

  it.each(devUrls)('without the variable, a loopback Worker refuses $name', ({ url }) => {
    expect(checkCallbackUrl(url, { devOrigins: [], serverOrigin: 'http://127.0.0.1:8787' })).toMatchObject({ ok: false });
  });
});

describe('parseDevOrigins', () => {
  it.each([
    { text: undefined, origins: [] },
    { text: '', origins: [] },
    { text: ' , ,', origins: [] },
    { text: 'http://127.0.0.1:8788', origins: ['http://127.0.0.1:8788'] },
    { text: 'http://127.0.0.1:8788/', origins: ['http://127.0.0.1:8788'] },
    { text: 'http://localhost:80', origins: ['http://localhost'] },
    { text: 'http://localhost', origins: ['http://localhost'] },
    { text: 'https://localhost:443', origins: ['https://localhost'] },
    { text: 'HTTP://LOCALHOST:9000', origins: ['http://localhost:9000'] },
    { text: 'http://[::1]:7000', origins: ['http://[::1]:7000'] },
    { text: 'http://[0:0:0:0:0:0:0:1]:7000', origins: ['http://[::1]:7000'] },
    { text: 'http://127.1:8788', origins: ['http://127.0.0.1:8788'] },
    { text: 'http://127.200.0.9:1', origins: ['http://127.200.0.9:1'] },
    { text: ' http://127.0.0.1:1 ,http://localhost:2, ', origins: ['http://127.0.0.1:1', 'http://localhost:2'] },
  ])('$text: $origins', ({ text, origins }) => {
    expect(parseDevOrigins(text)).toEqual(origins);
  });

  it.each([
    { text: '*', why: 'not a URL' },
    { text: 'localhost:8788', why: 'not http or https' },
    { text: '127.0.0.1:8788', why: 'not a URL' },
    { text: 'http://', why: 'not a URL' },
    { text: 'ws://127.0.0.1:8788', why: 'not http or https' },
    { text: 'http://127.0.0.1:8788/hooks', why: 'not an origin alone' },
    { text: 'http://127.0.0.1:8788?x', why: 'not an origin alone' },
    { text: 'http://127.0.0.1:8788#x', why: 'not an origin alone' },
    { text: 'http://u@127.0.0.1:8788', why: 'not an origin alone' },
    { text: 'http://localhost:*', why: 'not a URL' },
    { text: 'https://hooks.example.com', why: 'not a loopback host' },
    { text: 'http://10.0.0.5:8788', why: 'not a loopback host' },
    { text: 'http://0.0.0.0:8788', why: 'not a loopback host' },
    { text: 'http://app.localhost:8788', why: 'not a loopback host' },
    { text: 'http://localhost.:8788', why: 'not a loopback host' },
    { text: 'http://[::ffff:127.0.0.1]:8788', why: 'not a loopback host' },
    { text: 'http://127.0.0.1:8788,https://hooks.example.com', why: 'not a loopback host' },
  ])('refuses $text: $why', ({ text, why }) => {
    let thrown: unknown;
    try {
      parseDevOrigins(text);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(DevOriginsError);
    const message = (thrown as Error).message;
    expect(message).toMatch(/^configuration: WEBHOOK_DEV_ORIGINS /);
    expect(message).toContain(why);
    // The configuration error reaches the wire naming the variable, as every variable's does.
    expect(variableProblem(thrown).detail).toMatch(/^WEBHOOK_DEV_ORIGINS .*Leave it unset in production$/);
  });
});
