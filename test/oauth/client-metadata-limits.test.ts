import { describe, expect, it } from 'vitest';
import { clientMetadataViolation, RECORD_BYTES, storedBytes } from '../../src/auth/client-metadata-limits.ts';

const uri = (length: number) => `https://c.example/${'a'.repeat(length - 'https://c.example/'.length)}`;
const list = <T>(count: number, entry: (i: number) => T): T[] => Array.from({ length: count }, (_, i) => entry(i));
/** `count` control characters: six bytes each as stored (`\u0001`). */
const controls = (count: number) => '\u0001'.repeat(count);
/**
 * Redirect URIs whose record is `bytes` as measured: `{"redirect_uris":[` (18), seven of 2,000
 * characters (2,002 each with quotes, and six commas), a comma, and one of the rest, `]}` (2).
 */
const redirectsOf = (bytes: number) => [...list(7, () => uri(2_000)), uri(bytes - 18 - 7 * 2_002 - 6 - 1 - 2 - 2)];
/** What the provider adds, which the bound leaves room for. */
const PROVIDER_FIELDS_BYTES = 512;

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
    { name: 'ten redirect URIs of 1,400 characters', metadata: { redirect_uris: list(10, () => uri(1_400)) } },
    { name: 'a client_name of 170 control characters (1,020 bytes stored)', metadata: { client_name: controls(170) } },
    { name: 'a client_name of 256 CJK characters (768 bytes)', metadata: { client_name: '名'.repeat(256) } },
    { name: 'a client_name of 128 emoji (256 UTF-16 units, 512 bytes)', metadata: { client_name: '😀'.repeat(128) } },
    { name: 'a client_name of 256 quotes (512 bytes stored)', metadata: { client_name: '"'.repeat(256) } },
    { name: 'ten grant types', metadata: { grant_types: list(10, () => 'authorization_code') } },
    { name: 'a record at its bound exactly', metadata: { redirect_uris: redirectsOf(RECORD_BYTES - PROVIDER_FIELDS_BYTES) } },
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
    // Bounds on what is stored: a control character is six bytes there, a lone surrogate too.
    {
      name: 'a client_name of 171 control characters (1,026 bytes stored)',
      metadata: { client_name: controls(171) },
      says: 'client_name takes more than 1024 bytes stored',
    },
    {
      name: 'a client_name of 256 control characters (1,536 bytes stored)',
      metadata: { client_name: controls(256) },
      says: 'client_name takes more than 1024 bytes',
    },
    {
      name: 'a client_name of 200 lone surrogates (1,200 bytes stored)',
      metadata: { client_name: '\ud800'.repeat(200) },
      says: 'client_name takes more than 1024 bytes',
    },
    {
      name: 'a localized name of 200 control characters',
      metadata: { 'client_name#fr': controls(200) },
      says: 'client_name#fr takes more than 1024 bytes',
    },
    {
      name: 'a client_uri of 2,048 characters ending in a control character (2,053 bytes)',
      metadata: { client_uri: `${uri(2_047)}\u0001` },
      says: 'client_uri takes more than 2048 bytes',
    },
    {
      name: 'a redirect URI of 1,034 characters, 1,016 of them é (2,050 bytes)',
      metadata: { redirect_uris: [`https://c.example/${'é'.repeat(1_016)}`] },
      says: 'redirect_uris: each entry at most 2048 bytes stored',
    },
    {
      name: 'a contact of 171 control characters',
      metadata: { contacts: [controls(171)] },
      says: 'contacts: each entry at most 1024 bytes stored',
    },
    {
      name: 'a language tag of 10 control characters (60 bytes stored)',
      metadata: { [`client_name#${controls(10)}`]: 'n' },
      says: 'a language tag of at most 35',
    },
    { name: 'eleven grant types', metadata: { grant_types: list(11, () => 'authorization_code') }, says: 'grant_types: at most 10' },
    { name: 'eleven response types', metadata: { response_types: list(11, () => 'code') }, says: 'response_types: at most 10' },
    // The record: the fields' bounds added up are more than it.
    {
      name: 'ten redirect URIs of 2,048 characters (20,521 bytes stored)',
      metadata: { redirect_uris: list(10, () => uri(2_048)) },
      says: 'more than 16384',
    },
    {
      name: 'a record one byte past its bound',
      metadata: { redirect_uris: redirectsOf(RECORD_BYTES - PROVIDER_FIELDS_BYTES + 1) },
      says: 'would take 16385 bytes stored, more than 16384',
    },
    {
      name: 'every name and contact at its bound, localized ten times',
      metadata: {
        client_name: controls(170),
        ...Object.fromEntries(list(10, (i) => [`client_name#x-${i}`, controls(170)] as const)),
        contacts: list(10, () => controls(170)),
      },
      says: 'more than 16384',
    },
  ])('refuses $name', ({ metadata, says }) => {
    expect(clientMetadataViolation(metadata)).toContain(says);
  });
});

describe('storedBytes', () => {
  it.each([
    { name: 'nothing', text: '', bytes: 0 },
    { name: 'ASCII', text: 'ascii', bytes: 5 },
    { name: 'a control character', text: '\u0001', bytes: 6 },
    { name: 'a newline and a tab (short escapes)', text: '\n\t', bytes: 4 },
    { name: 'a quote and a backslash', text: '"\\', bytes: 4 },
    { name: 'DEL (not escaped)', text: '\u007f', bytes: 1 },
    { name: 'a Latin letter with an accent', text: 'é', bytes: 2 },
    { name: 'a CJK character', text: '名', bytes: 3 },
    { name: 'an emoji (a surrogate pair)', text: '😀', bytes: 4 },
    { name: 'a lone surrogate (escaped)', text: '\ud800', bytes: 6 },
  ])('$name: $bytes bytes', ({ text, bytes }) => {
    expect(storedBytes(text)).toBe(bytes);
  });
});
