import { describe, expect, it } from 'vitest';
import { hostRefusal, urlHostRefusal } from '../../src/core/special-purpose-address.ts';

const at = (host: string) => `https://${host}/client-metadata.json`;

describe('urlHostRefusal refuses', () => {
  it.each([
    // Names that stay on the machine or its network.
    { name: 'localhost', url: at('localhost'), says: 'loopback name' },
    { name: 'localhost with a port', url: 'https://localhost:8443/c.json', says: 'loopback name' },
    { name: 'LOCALHOST in capitals', url: at('LOCALHOST'), says: 'loopback name' },
    { name: 'localhost. (fully qualified)', url: at('localhost.'), says: 'loopback name' },
    { name: 'localhost.. (two trailing dots)', url: at('localhost..'), says: 'loopback name' },
    { name: 'a name under .localhost', url: at('app.localhost'), says: 'loopback name' },
    { name: 'a deeper name under .localhost', url: at('a.b.localhost'), says: 'loopback name' },
    { name: 'a percent-encoded localhost', url: at('%6c%6f%63%61%6c%68%6f%73%74'), says: 'loopback name' },
    { name: 'a full-width localhost', url: at('ｌｏｃａｌｈｏｓｔ'), says: 'loopback name' },
    { name: 'an upper-case scheme', url: 'HTTPS://localhost/c.json', says: 'loopback name' },
    { name: 'a leading space', url: ' https://localhost/c.json', says: 'loopback name' },
    { name: 'userinfo before the host', url: 'https://client.example@localhost/c.json', says: 'loopback name' },
    { name: 'an mDNS name', url: at('printer.local'), says: 'multicast DNS' },
    { name: 'a home.arpa name', url: at('router.home.arpa'), says: 'home network' },
    { name: 'an .internal name', url: at('svc.internal'), says: 'private-use name' },
    // IPv4 loopback, in every spelling the URL parser reads as it.
    { name: '127.0.0.1', url: at('127.0.0.1'), says: '127.0.0.0/8, loopback' },
    { name: '127.0.0.1 with a port', url: 'https://127.0.0.1:8787/client', says: 'loopback' },
    { name: 'the top of 127/8', url: at('127.255.255.254'), says: 'loopback' },
    { name: '127.1 (two parts)', url: at('127.1'), says: '127.0.0.1 is in 127.0.0.0/8' },
    { name: '127.0.1 (three parts)', url: at('127.0.1'), says: 'loopback' },
    { name: '2130706433 (one decimal number)', url: at('2130706433'), says: '127.0.0.1 is in' },
    { name: '0x7f000001 (one hex number)', url: at('0x7f000001'), says: '127.0.0.1 is in' },
    { name: '0177.0.0.1 (octal)', url: at('0177.0.0.1'), says: '127.0.0.1 is in' },
    { name: '0x7f.0.0.1 (a hex part)', url: at('0x7f.0.0.1'), says: '127.0.0.1 is in' },
    { name: '017700000001 (one octal number)', url: at('017700000001'), says: '127.0.0.1 is in' },
    { name: '127.0.0.1. (a trailing dot)', url: at('127.0.0.1.'), says: 'loopback' },
    { name: 'percent-encoded digits', url: at('%31%32%37.0.0.1'), says: 'loopback' },
    { name: 'full-width digits', url: at('１２７.０.０.１'), says: 'loopback' },
    { name: 'an ideographic full stop', url: at('127。0。0。1'), says: 'loopback' },
    // Every other IPv4 special-purpose block, at its edges.
    { name: '0.0.0.0', url: at('0.0.0.0'), says: '"this network"' },
    { name: '0 (one number)', url: at('0'), says: '"this network"' },
    { name: '0.255.255.255', url: at('0.255.255.255'), says: '"this network"' },
    { name: '10.0.0.0', url: at('10.0.0.0'), says: 'private-use' },
    { name: '10.255.255.255', url: at('10.255.255.255'), says: 'private-use' },
    { name: '100.64.0.0', url: at('100.64.0.0'), says: 'CGNAT' },
    { name: '100.127.255.255', url: at('100.127.255.255'), says: 'CGNAT' },
    { name: '169.254.169.254 (cloud metadata)', url: at('169.254.169.254'), says: 'link-local' },
    { name: '172.16.0.0', url: at('172.16.0.0'), says: 'private-use' },
    { name: '172.31.255.255', url: at('172.31.255.255'), says: 'private-use' },
    { name: '192.0.0.8', url: at('192.0.0.8'), says: 'IETF protocol assignments' },
    { name: '192.0.0.170 (NAT64 discovery)', url: at('192.0.0.170'), says: 'IETF protocol assignments' },
    { name: '192.0.2.1', url: at('192.0.2.1'), says: 'TEST-NET-1' },
    { name: '192.31.196.1', url: at('192.31.196.1'), says: 'AS112-v4' },
    { name: '192.52.193.1', url: at('192.52.193.1'), says: 'AMT' },
    { name: '192.88.99.1', url: at('192.88.99.1'), says: '6to4 relay' },
    { name: '192.168.0.1', url: at('192.168.0.1'), says: 'private-use' },
    { name: '192.168.255.255', url: at('192.168.255.255'), says: 'private-use' },
    { name: '192.175.48.1', url: at('192.175.48.1'), says: 'AS112' },
    { name: '198.18.0.0', url: at('198.18.0.0'), says: 'benchmarking' },
    { name: '198.19.255.255', url: at('198.19.255.255'), says: 'benchmarking' },
    { name: '198.51.100.7', url: at('198.51.100.7'), says: 'TEST-NET-2' },
    { name: '203.0.113.7', url: at('203.0.113.7'), says: 'TEST-NET-3' },
    { name: '224.0.0.1', url: at('224.0.0.1'), says: 'multicast' },
    { name: '239.255.255.250', url: at('239.255.255.250'), says: 'multicast' },
    { name: '240.0.0.1', url: at('240.0.0.1'), says: 'reserved' },
    { name: '255.255.255.255', url: at('255.255.255.255'), says: 'broadcast' },
    { name: '0xffffffff (one hex number)', url: at('0xffffffff'), says: 'broadcast' },
    // IPv6 loopback and unspecified, in any form.
    { name: '[::1]', url: at('[::1]'), says: 'outside 2000::/3' },
    { name: '[::1] with a port', url: 'https://[::1]:8443/c', says: 'outside 2000::/3' },
    { name: '[0:0:0:0:0:0:0:1] written in full', url: at('[0:0:0:0:0:0:0:1]'), says: 'outside 2000::/3' },
    { name: '[::]', url: at('[::]'), says: 'outside 2000::/3' },
    { name: '[::127.0.0.1] (IPv4-compatible, deprecated)', url: at('[::127.0.0.1]'), says: 'outside 2000::/3' },
    // IPv6 forms that carry a special IPv4 address.
    { name: '[::ffff:127.0.0.1] (IPv4-mapped)', url: at('[::ffff:127.0.0.1]'), says: 'IPv4-mapped (RFC 4291), of 127.0.0.1' },
    { name: '[::ffff:7f00:1] (IPv4-mapped, in hex)', url: at('[::ffff:7f00:1]'), says: 'IPv4-mapped' },
    { name: '[0:0:0:0:0:ffff:10.0.0.1]', url: at('[0:0:0:0:0:ffff:10.0.0.1]'), says: 'of 10.0.0.1' },
    { name: '[::ffff:169.254.169.254]', url: at('[::ffff:169.254.169.254]'), says: 'link-local' },
    { name: '[::ffff:0:127.0.0.1] (SIIT)', url: at('[::ffff:0:127.0.0.1]'), says: 'IPv4-translated' },
    { name: '[64:ff9b::127.0.0.1] (NAT64)', url: at('[64:ff9b::127.0.0.1]'), says: 'NAT64 well-known prefix (RFC 6052), of 127.0.0.1' },
    { name: '[64:ff9b::a00:1] (NAT64 of 10.0.0.1, in hex)', url: at('[64:ff9b::a00:1]'), says: 'of 10.0.0.1' },
    { name: '[64:ff9b::c0a8:101] (NAT64 of 192.168.1.1)', url: at('[64:ff9b::c0a8:101]'), says: 'private-use' },
    // IPv6 special-purpose blocks outside 2000::/3.
    { name: '[64:ff9b:1::1] (local-use translation)', url: at('[64:ff9b:1::1]'), says: 'outside 2000::/3' },
    { name: '[100::1] (discard-only)', url: at('[100::1]'), says: 'outside 2000::/3' },
    { name: '[5f00::1] (SRv6 SIDs)', url: at('[5f00::1]'), says: 'outside 2000::/3' },
    { name: '[fc00::1] (ULA)', url: at('[fc00::1]'), says: 'outside 2000::/3' },
    { name: '[fd12:3456:789a::1] (ULA)', url: at('[fd12:3456:789a::1]'), says: 'outside 2000::/3' },
    { name: '[fe80::1] (link-local)', url: at('[fe80::1]'), says: 'outside 2000::/3' },
    { name: '[febf:ffff::1] (top of link-local)', url: at('[febf:ffff::1]'), says: 'outside 2000::/3' },
    { name: '[fec0::1] (site-local, deprecated)', url: at('[fec0::1]'), says: 'outside 2000::/3' },
    { name: '[ff02::1] (multicast)', url: at('[ff02::1]'), says: 'outside 2000::/3' },
    { name: '[FF05::1:3] in capitals', url: at('[FF05::1:3]'), says: 'outside 2000::/3' },
    // IPv6 special-purpose blocks inside 2000::/3.
    { name: '[2001::1] (Teredo)', url: at('[2001::1]'), says: '2001::/23' },
    { name: '[2001:1ff:ffff::1] (top of 2001::/23)', url: at('[2001:1ff:ffff::1]'), says: '2001::/23' },
    { name: '[2001:2::1] (benchmarking)', url: at('[2001:2::1]'), says: '2001::/23' },
    { name: '[2001:db8::1] (documentation)', url: at('[2001:db8::1]'), says: '2001:db8::/32' },
    { name: '[2002:7f00:1::1] (6to4 of 127.0.0.1)', url: at('[2002:7f00:1::1]'), says: '2002::/16, 6to4' },
    { name: '[2620:4f:8000::1] (AS112)', url: at('[2620:4f:8000::1]'), says: 'AS112' },
    { name: '[3fff::1] (documentation)', url: at('[3fff::1]'), says: '3fff::/20' },
    { name: '[3fff:fff::1] (top of 3fff::/20)', url: at('[3fff:fff::1]'), says: '3fff::/20' },
  ])('$name', ({ url, says }) => {
    expect(urlHostRefusal(url)).toContain(says);
  });
});

describe('urlHostRefusal passes', () => {
  it.each([
    { name: 'a public name', url: at('client.example') },
    { name: "a hosted client's metadata URL", url: 'https://claude.ai/oauth/claude-code-client-metadata' },
    { name: 'a name that starts with localhost', url: at('localhost.example.com') },
    { name: 'a name that ends in localhost without a dot', url: at('notlocalhost') },
    { name: 'a name that ends in local without a dot', url: at('mylocal') },
    { name: 'internal as a label, not the TLD', url: at('internal.example') },
    { name: 'a public IPv4 address', url: at('8.8.8.8') },
    { name: 'a public IPv4 address with a port', url: 'https://1.1.1.1:443/c' },
    { name: 'a public address as one number', url: at('134744072') },
    // The neighbours of each block's edges.
    { name: '1.0.0.0, after 0/8', url: at('1.0.0.0') },
    { name: '9.255.255.255, before 10/8', url: at('9.255.255.255') },
    { name: '11.0.0.0, after 10/8', url: at('11.0.0.0') },
    { name: '100.63.255.255, before 100.64/10', url: at('100.63.255.255') },
    { name: '100.128.0.0, after 100.64/10', url: at('100.128.0.0') },
    { name: '126.255.255.255, before 127/8', url: at('126.255.255.255') },
    { name: '128.0.0.0, after 127/8', url: at('128.0.0.0') },
    { name: '169.253.255.255, before 169.254/16', url: at('169.253.255.255') },
    { name: '169.255.0.0, after 169.254/16', url: at('169.255.0.0') },
    { name: '172.15.255.255, before 172.16/12', url: at('172.15.255.255') },
    { name: '172.32.0.0, after 172.16/12', url: at('172.32.0.0') },
    { name: '192.0.1.255, between 192.0.0/24 and 192.0.2/24', url: at('192.0.1.255') },
    { name: '192.167.255.255, before 192.168/16', url: at('192.167.255.255') },
    { name: '192.169.0.0, after 192.168/16', url: at('192.169.0.0') },
    { name: '198.17.255.255, before 198.18/15', url: at('198.17.255.255') },
    { name: '198.20.0.0, after 198.18/15', url: at('198.20.0.0') },
    { name: '223.255.255.255, before multicast', url: at('223.255.255.255') },
    { name: 'a public IPv6 address', url: at('[2606:4700:4700::1111]') },
    { name: 'another public IPv6 address', url: at('[2001:4860:4860::8888]') },
    { name: '[2001:200::1], after 2001::/23', url: at('[2001:200::1]') },
    { name: '[2001:db9::1], after 2001:db8::/32', url: at('[2001:db9::1]') },
    { name: '[2003::1], after 2002::/16', url: at('[2003::1]') },
    { name: '[2620:4f:8001::1], after the AS112 /48', url: at('[2620:4f:8001::1]') },
    { name: '[3ffe::1], before 3fff::/20', url: at('[3ffe::1]') },
    { name: '[::ffff:8.8.8.8] (IPv4-mapped public)', url: at('[::ffff:8.8.8.8]') },
    { name: '[64:ff9b::8.8.8.8] (NAT64 of a public address)', url: at('[64:ff9b::8.8.8.8]') },
    { name: 'not a URL (a registered client id)', url: 'KTN6sBCI3-4CJWXH' },
    { name: 'an empty string', url: '' },
  ])('$name', ({ url }) => {
    expect(urlHostRefusal(url)).toBeUndefined();
  });
});

describe('hostRefusal', () => {
  it.each([
    { host: '127.0.0.1', refused: true },
    { host: '0x7f.1', refused: true },
    { host: '[::1]', refused: true },
    { host: 'localhost', refused: true },
    { host: 'client.example', refused: false },
    { host: '8.8.8.8', refused: false },
    { host: 'not a host', refused: false },
  ])('$host: refused $refused', ({ host, refused }) => {
    expect(hostRefusal(host) !== undefined).toBe(refused);
  });
});
