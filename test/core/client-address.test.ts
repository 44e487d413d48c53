import { describe, expect, it } from 'vitest';
import { addressKey, rateLimitAddress, readIpv6Prefix } from '../../src/core/client-address.ts';
import { readConfig } from '../../src/config.ts';

describe('rateLimitAddress', () => {
  it.each([
    // IPv4: one address, one client.
    { name: 'an IPv4 address as itself', address: '203.0.113.7', key: '203.0.113.7' },
    { name: 'the lowest and highest IPv4 addresses', address: '0.0.0.0', key: '0.0.0.0' },
    { name: 'the highest IPv4 address', address: '255.255.255.255', key: '255.255.255.255' },
    { name: 'an IPv4 address with surrounding whitespace', address: ' 198.51.100.1 ', key: '198.51.100.1' },
    // IPv6: the /64 its host was given.
    { name: 'a full IPv6 address as its /64', address: '2001:0db8:0001:0002:0003:0004:0005:0006', key: '2001:db8:1:2::/64' },
    { name: 'another address of the same /64 as the same key', address: '2001:db8:1:2:ffff:ffff:ffff:ffff', key: '2001:db8:1:2::/64' },
    { name: 'a compressed IPv6 address', address: '2001:db8:1:2::1', key: '2001:db8:1:2::/64' },
    { name: 'an upper-case IPv6 address, lower-cased', address: '2001:DB8:A:B::C', key: '2001:db8:a:b::/64' },
    { name: 'a neighbouring /64 as another key', address: '2001:db8:1:3::1', key: '2001:db8:1:3::/64' },
    { name: 'compression inside the prefix', address: '2001::1:2:3:4', key: '2001::/64' },
    { name: 'a prefix with no zero run', address: '2001:db8:cafe:1::', key: '2001:db8:cafe:1::/64' },
    { name: '`::`', address: '::', key: '::/64' },
    { name: 'the loopback address', address: '::1', key: '::/64' },
    { name: '`::` at the end', address: '2001:db8:1:2:3:4:5::', key: '2001:db8:1:2::/64' },
    { name: '`::` for a single group', address: '2001:db8:1::2:3:4:5', key: '2001:db8:1::/64' },
    { name: 'a link-local address with a zone id, the zone dropped', address: 'fe80::1%eth0', key: 'fe80::/64' },
    { name: 'a numeric zone id', address: 'fe80::abcd%25', key: 'fe80::/64' },
    { name: 'an IPv4 tail that is not IPv4-mapped', address: '64:ff9b:1:2::192.0.2.33', key: '64:ff9b:1:2::/64' },
    // An IPv4 client through an IPv6 socket is that IPv4 client.
    { name: 'an IPv4-mapped IPv6 address as the IPv4 address', address: '::ffff:192.0.2.128', key: '192.0.2.128' },
    { name: 'an IPv4-mapped address written in hex', address: '::ffff:c000:280', key: '192.0.2.128' },
    { name: 'an IPv4-mapped address written in full', address: '0:0:0:0:0:ffff:192.0.2.1', key: '192.0.2.1' },
    // Not an address: one shared key.
    { name: 'no header', address: null, key: 'unknown' },
    { name: 'an undefined value', address: undefined, key: 'unknown' },
    { name: 'an empty value', address: '', key: 'unknown' },
    { name: 'a name', address: 'localhost', key: 'unknown' },
    { name: 'an IPv4 part over 255', address: '256.1.1.1', key: 'unknown' },
    { name: 'an IPv4 part with a leading zero', address: '010.1.1.1', key: 'unknown' },
    { name: 'three IPv4 parts', address: '1.2.3', key: 'unknown' },
    { name: 'an IPv4 address with a port', address: '1.2.3.4:80', key: 'unknown' },
    { name: 'an IPv4 address with a zone', address: '1.2.3.4%eth0', key: 'unknown' },
    { name: 'two `::`', address: '2001::1::2', key: 'unknown' },
    { name: '`:::`', address: ':::', key: 'unknown' },
    { name: 'nine groups', address: '1:2:3:4:5:6:7:8:9', key: 'unknown' },
    { name: 'seven groups without `::`', address: '1:2:3:4:5:6:7', key: 'unknown' },
    { name: 'eight groups and `::`', address: '1:2:3:4::5:6:7:8', key: 'unknown' },
    { name: 'a group of five digits', address: '2001:db8::12345', key: 'unknown' },
    { name: 'a group that is not hex', address: '2001:db8::g', key: 'unknown' },
    { name: 'a leading single colon', address: ':1:2:3:4:5:6:7', key: 'unknown' },
    { name: 'a trailing single colon', address: '1:2:3:4:5:6:7:', key: 'unknown' },
    { name: 'an IPv4 part before the end', address: '::1.2.3.4:5', key: 'unknown' },
    { name: 'an IPv4 part before `::`', address: '1.2.3.4::', key: 'unknown' },
    { name: 'an empty zone id', address: 'fe80::1%', key: 'unknown' },
    { name: 'a zone id with a space', address: 'fe80::1%a b', key: 'unknown' },
    { name: 'a bracketed address', address: '[2001:db8::1]', key: 'unknown' },
    { name: 'a list of addresses', address: '203.0.113.7, 198.51.100.1', key: 'unknown' },
  ])('keys $name', ({ address, key }) => {
    expect(rateLimitAddress(address)).toBe(key);
  });

  it.each([
    { prefix: 128, address: '2001:db8:1:2:3:4:5:6', key: '2001:db8:1:2:3:4:5:6/128' },
    { prefix: 56, address: '2001:db8:1:2ff::1', key: '2001:db8:1:200::/56' },
    { prefix: 48, address: '2001:db8:1:2::1', key: '2001:db8:1::/48' },
    { prefix: 33, address: '2001:db8:ffff::1', key: '2001:db8:8000::/33' },
    { prefix: 1, address: 'ffff::1', key: '8000::/1' },
    { prefix: 48, address: '203.0.113.7', key: '203.0.113.7' },
    { prefix: 48, address: '::ffff:203.0.113.7', key: '203.0.113.7' },
  ])('keys $address with a /$prefix as $key', ({ prefix, address, key }) => {
    expect(rateLimitAddress(address, prefix)).toBe(key);
  });
});

describe('RATE_LIMIT_IPV6_PREFIX', () => {
  it.each([
    { text: undefined, prefix: 64 },
    { text: '', prefix: 64 },
    { text: '48', prefix: 48 },
    { text: ' 56 ', prefix: 56 },
    { text: '1', prefix: 1 },
    { text: '128', prefix: 128 },
  ])('reads $text as /$prefix', ({ text, prefix }) => {
    expect(readIpv6Prefix(text)).toBe(prefix);
    expect(readConfig(text === undefined ? {} : { RATE_LIMIT_IPV6_PREFIX: text }).rateLimitIpv6Prefix).toBe(prefix);
  });

  it.each(['0', '129', '-1', '64.5', '/64', 'sixty-four', '1e2', '0x40', '1000'])('refuses %j as a configuration error', (text) => {
    expect(() => readConfig({ RATE_LIMIT_IPV6_PREFIX: text })).toThrow(/configuration: RATE_LIMIT_IPV6_PREFIX/);
  });
});

describe('addressKey', () => {
  it('keys each address and prefix as itself, whatever was keyed before', () => {
    const asked: [string | null | undefined, number, string][] = [
      ['203.0.113.7', 64, 'address:203.0.113.7'],
      ['203.0.113.7', 64, 'address:203.0.113.7'],
      ['2001:db8:1:2::1', 64, 'address:2001:db8:1:2::/64'],
      ['2001:db8:1:2::1', 48, 'address:2001:db8:1::/48'],
      [null, 64, 'address:unknown'],
      [undefined, 64, 'address:unknown'],
      ['203.0.113.8', 64, 'address:203.0.113.8'],
      ['203.0.113.7', 64, 'address:203.0.113.7'],
    ];
    for (const [address, prefix, key] of asked) expect(addressKey(address, prefix)).toBe(key);
  });
});
