import { describe, expect, it } from 'vitest';
import { clientMetadataViolation } from '../../src/auth/client-metadata-limits.ts';

const uri = (length: number) => `https://c.example/${'a'.repeat(length - 'https://c.example/'.length)}`;
const list = <T>(count: number, entry: (i: number) => T): T[] => Array.from({ length: count }, (_, i) => entry(i));

describe('clientMetadataViolation', () => {
  it.each([
    { name: 'no fields', metadata: {} },
    {
      name: 'a usual registration',
      metadata: { client_name: 'Claude', redirect_uris: ['http://127.0.0.1:9/cb'], token_endpoint_auth_method: 'none' },
    },
    { name: 'a client_name of 256 characters', metadata: { client_name: 'x'.repeat(256) } },
    {
      name: 'each URI of 2,048 characters',
      metadata: Object.fromEntries(['client_uri', 'logo_uri', 'policy_uri', 'tos_uri', 'jwks_uri'].map((f) => [f, uri(2_048)])),
    },
    { name: 'ten redirect URIs of 2,048 characters', metadata: { redirect_uris: list(10, () => uri(2_048)) } },
    { name: 'ten contacts of 256 characters', metadata: { contacts: list(10, () => 'c'.repeat(256)) } },
    { name: 'ten language-tagged fields', metadata: Object.fromEntries(list(10, (i) => [`client_name#x-${i}`, 'x'.repeat(256)] as const)) },
    { name: 'a 35-character language tag', metadata: { [`client_name#${'a'.repeat(35)}`]: 'n' } },
    { name: 'a field the provider does not store, of any size', metadata: { software_statement: 'x'.repeat(60_000) } },
    {
      name: 'values of the wrong type (the provider refuses them first)',
      metadata: { client_name: 7, redirect_uris: 'x', contacts: [1, 2] },
    },
  ])('passes $name', ({ metadata }) => {
    expect(clientMetadataViolation(metadata)).toBeUndefined();
  });

  it.each([
    { name: 'a client_name of 257 characters', metadata: { client_name: 'x'.repeat(257) }, says: 'client_name is longer than 256' },
    { name: 'a client_uri of 2,049 characters', metadata: { client_uri: uri(2_049) }, says: 'client_uri is longer than 2048' },
    { name: 'a jwks_uri of 2,049 characters', metadata: { jwks_uri: uri(2_049) }, says: 'jwks_uri is longer than 2048' },
    {
      name: 'a localized name of 257 characters',
      metadata: { 'client_name#fr': 'x'.repeat(257) },
      says: 'client_name#fr is longer than 256',
    },
    { name: 'a localized URI of 2,049 characters', metadata: { 'tos_uri#de': uri(2_049) }, says: 'tos_uri#de is longer than 2048' },
    {
      name: 'eleven language-tagged fields',
      metadata: Object.fromEntries(list(11, (i) => [`logo_uri#x-${i}`, 'u'] as const)),
      says: 'at most 10 language-tagged',
    },
    { name: 'a 36-character language tag', metadata: { [`client_name#${'a'.repeat(36)}`]: 'n' }, says: 'a language tag of at most 35' },
    {
      name: 'eleven redirect URIs',
      metadata: { redirect_uris: list(11, (i) => `http://127.0.0.1:9/${i}`) },
      says: 'redirect_uris: at most 10',
    },
    {
      name: 'a redirect URI of 2,049 characters',
      metadata: { redirect_uris: [uri(2_049)] },
      says: 'redirect_uris: each entry at most 2048',
    },
    { name: 'eleven contacts', metadata: { contacts: list(11, (i) => `c${i}`) }, says: 'contacts: at most 10' },
    { name: 'a contact of 257 characters', metadata: { contacts: ['c'.repeat(257)] }, says: 'contacts: each entry at most 256' },
  ])('refuses $name', ({ metadata, says }) => {
    expect(clientMetadataViolation(metadata)).toContain(says);
  });
});
