import { describe, expect, it } from 'vitest';
import { acceptListsType, isJsonContentType, parseAccept, parseMediaType } from '../../src/core/media-type.ts';

/** A MediaRange as a plain object, so rows can state it literally. */
function plain(range: ReturnType<typeof parseMediaType>) {
  return range === undefined
    ? undefined
    : { type: range.type, subtype: range.subtype, params: Object.fromEntries(range.params), q: range.q };
}

describe('parseMediaType', () => {
  it.each([
    { name: 'a bare type', text: 'application/json', range: { type: 'application', subtype: 'json', params: {}, q: 1 } },
    {
      name: 'an upper-case type, lower-cased',
      text: 'Application/JSON',
      range: { type: 'application', subtype: 'json', params: {}, q: 1 },
    },
    { name: 'surrounding whitespace', text: '  text/event-stream  ', range: { type: 'text', subtype: 'event-stream', params: {}, q: 1 } },
    {
      name: 'a parameter',
      text: 'text/plain; charset=utf-8',
      range: { type: 'text', subtype: 'plain', params: { charset: 'utf-8' }, q: 1 },
    },
    {
      name: 'a parameter name lower-cased, its value kept as is',
      text: 'text/plain;CHARSET=UTF-8',
      range: { type: 'text', subtype: 'plain', params: { charset: 'UTF-8' }, q: 1 },
    },
    {
      name: 'a quoted parameter value, unquoted',
      text: 'text/plain; charset="utf-8"',
      range: { type: 'text', subtype: 'plain', params: { charset: 'utf-8' }, q: 1 },
    },
    {
      name: 'a quoted value containing a semicolon and a comma',
      text: 'text/plain; foo="a;b,c"; bar=baz',
      range: { type: 'text', subtype: 'plain', params: { foo: 'a;b,c', bar: 'baz' }, q: 1 },
    },
    {
      name: 'a quoted value with an escaped quote',
      text: 'text/plain; foo="a\\"b"',
      range: { type: 'text', subtype: 'plain', params: { foo: 'a"b' }, q: 1 },
    },
    {
      name: 'a quoted value with an escaped quote followed by a semicolon',
      text: 'text/plain; foo="a\\";b"; bar=1',
      range: { type: 'text', subtype: 'plain', params: { foo: 'a";b', bar: '1' }, q: 1 },
    },
    { name: 'an empty quoted value', text: 'text/plain; foo=""', range: { type: 'text', subtype: 'plain', params: { foo: '' }, q: 1 } },
    {
      name: 'empty parameters, skipped',
      text: 'text/plain;;charset=x;',
      range: { type: 'text', subtype: 'plain', params: { charset: 'x' }, q: 1 },
    },
    { name: 'a weight, kept out of the parameters', text: 'text/html;q=0.5', range: { type: 'text', subtype: 'html', params: {}, q: 0.5 } },
    { name: 'an upper-case Q weight', text: 'text/html;Q=0', range: { type: 'text', subtype: 'html', params: {}, q: 0 } },
    { name: 'the weight 1.000', text: 'text/html;q=1.000', range: { type: 'text', subtype: 'html', params: {}, q: 1 } },
    { name: 'the weight 0.001', text: 'text/html;q=0.001', range: { type: 'text', subtype: 'html', params: {}, q: 0.001 } },
    { name: 'the weight 0', text: 'text/html;q=0', range: { type: 'text', subtype: 'html', params: {}, q: 0 } },
    { name: 'the full wildcard', text: '*/*', range: { type: '*', subtype: '*', params: {}, q: 1 } },
    { name: 'a subtype wildcard', text: 'text/*;q=0.2', range: { type: 'text', subtype: '*', params: {}, q: 0.2 } },
    {
      name: 'a structured-syntax suffix',
      text: 'application/vnd.api+json',
      range: { type: 'application', subtype: 'vnd.api+json', params: {}, q: 1 },
    },
  ])('parses $name', ({ text, range }) => {
    expect(plain(parseMediaType(text))).toEqual(range);
  });

  it.each([
    { name: 'the empty string', text: '' },
    { name: 'a type without a subtype', text: 'application' },
    { name: 'an empty subtype', text: 'application/' },
    { name: 'an empty type', text: '/json' },
    { name: 'two slashes', text: 'a/b/c' },
    { name: 'a space inside the type', text: 'appli cation/json' },
    { name: 'a quote inside the subtype', text: 'application/js"on' },
    { name: 'a comma inside the subtype', text: 'application/json,' },
    { name: 'a parameter without "="', text: 'application/json;charset' },
    { name: 'a parameter without a name', text: 'application/json;=x' },
    { name: 'a parameter name with a space', text: 'application/json; na me=x' },
    { name: 'a weight above 1', text: 'text/html;q=1.5' },
    { name: 'a weight of 1.001', text: 'text/html;q=1.001' },
    { name: 'a weight of 2', text: 'text/html;q=2' },
    { name: 'a negative weight', text: 'text/html;q=-1' },
    { name: 'a weight with four decimals', text: 'text/html;q=0.1234' },
    { name: 'a weight that is not a number', text: 'text/html;q=abc' },
    { name: 'an empty weight', text: 'text/html;q=' },
    { name: 'a weight with a leading dot', text: 'text/html;q=.5' },
  ])('rejects $name', ({ text }) => {
    expect(parseMediaType(text)).toBeUndefined();
  });
});

describe('parseAccept', () => {
  it.each([
    { name: 'no header as no ranges', header: null, essences: [] },
    { name: 'an empty header as no ranges', header: '', essences: [] },
    { name: 'two types', header: 'application/json, text/event-stream', essences: ['application/json', 'text/event-stream'] },
    {
      name: 'members without spaces after commas',
      header: 'application/json,text/event-stream',
      essences: ['application/json', 'text/event-stream'],
    },
    { name: 'empty members, skipped', header: ' , ,application/json,, ', essences: ['application/json'] },
    { name: 'malformed members, ignored', header: 'garbage, text/event-stream, a/b/c', essences: ['text/event-stream'] },
    {
      name: 'a member with a malformed weight, ignored',
      header: 'text/event-stream;q=2, application/json',
      essences: ['application/json'],
    },
    {
      name: 'a quoted comma without splitting the member',
      header: 'text/plain;foo="a,b", application/json',
      essences: ['text/plain', 'application/json'],
    },
    { name: 'wildcards as ranges', header: '*/*;q=0.1, text/*', essences: ['*/*', 'text/*'] },
  ])('parses $name', ({ header, essences }) => {
    expect(parseAccept(header).map((range) => `${range.type}/${range.subtype}`)).toEqual(essences);
  });

  it('keeps the parameters of a member whose quoted value contains commas and semicolons', () => {
    const [first, second] = parseAccept('text/plain;foo="a,b;c";q=0.5, application/json');
    expect(plain(first)).toEqual({ type: 'text', subtype: 'plain', params: { foo: 'a,b;c' }, q: 0.5 });
    expect(plain(second)).toEqual({ type: 'application', subtype: 'json', params: {}, q: 1 });
  });
});

describe('acceptListsType', () => {
  it.each([
    { name: 'the exact type', header: 'text/event-stream', essence: 'text/event-stream', listed: true },
    { name: 'the type among others', header: 'application/json, text/event-stream', essence: 'application/json', listed: true },
    { name: 'the type in upper case', header: 'TEXT/EVENT-STREAM', essence: 'text/event-stream', listed: true },
    { name: 'the type with parameters', header: 'text/event-stream;charset=utf-8', essence: 'text/event-stream', listed: true },
    { name: 'the type with a tiny non-zero weight', header: 'text/event-stream;q=0.001', essence: 'text/event-stream', listed: true },
    { name: 'the type with weight 0', header: 'text/event-stream;q=0', essence: 'text/event-stream', listed: false },
    { name: 'the type with weight 0.000', header: 'text/event-stream;q=0.000', essence: 'text/event-stream', listed: false },
    { name: 'only the full wildcard', header: '*/*', essence: 'text/event-stream', listed: false },
    { name: 'only a subtype wildcard', header: 'text/*', essence: 'text/event-stream', listed: false },
    { name: 'a longer subtype', header: 'application/jsonx', essence: 'application/json', listed: false },
    { name: 'a related subtype', header: 'application/json-seq', essence: 'application/json', listed: false },
    { name: 'a prefix of the subtype', header: 'text/event', essence: 'text/event-stream', listed: false },
    { name: 'a plural subtype', header: 'text/event-streams', essence: 'text/event-stream', listed: false },
    {
      name: 'the type hidden inside a quoted parameter',
      header: 'text/plain;foo="x, application/json"',
      essence: 'application/json',
      listed: false,
    },
    { name: 'the type with a malformed weight', header: 'text/event-stream;q=2', essence: 'text/event-stream', listed: false },
    { name: 'nothing', header: null, essence: 'text/event-stream', listed: false },
    {
      name: 'the type both refused (q=0) and listed again without a weight (any non-zero listing counts)',
      header: 'application/json;q=0, application/json',
      essence: 'application/json',
      listed: true,
    },
  ])('for $name is $listed', ({ header, essence, listed }) => {
    expect(acceptListsType(parseAccept(header), essence)).toBe(listed);
  });
});

describe('isJsonContentType', () => {
  it.each([
    { name: 'application/json', header: 'application/json' },
    { name: 'mixed case', header: 'Application/Json' },
    { name: 'charset=utf-8', header: 'application/json; charset=utf-8' },
    { name: 'charset=UTF-8 without a space', header: 'application/json;charset=UTF-8' },
    { name: 'a quoted utf-8 charset', header: 'application/json; charset="utf-8"' },
    { name: 'an unrelated parameter', header: 'application/json; foo=bar' },
  ])('accepts $name', ({ header }) => {
    expect(isJsonContentType(header)).toBe(true);
  });

  it.each([
    { name: 'no header', header: null },
    { name: 'an empty header', header: '' },
    { name: 'application/jsonx', header: 'application/jsonx' },
    { name: 'a +json type', header: 'application/json-patch+json' },
    { name: 'text/json', header: 'text/json' },
    { name: 'a wildcard', header: 'application/*' },
    { name: 'text/event-stream', header: 'text/event-stream' },
    { name: 'charset iso-8859-1', header: 'application/json; charset=iso-8859-1' },
    { name: 'charset utf8 (no dash)', header: 'application/json; charset=utf8' },
    { name: 'charset utf-16', header: 'application/json; charset=utf-16' },
    { name: 'an empty charset', header: 'application/json; charset=' },
    { name: 'a list of types', header: 'application/json, text/plain' },
    { name: 'a malformed parameter', header: 'application/json;charset' },
  ])('refuses $name', ({ header }) => {
    expect(isJsonContentType(header)).toBe(false);
  });
});
