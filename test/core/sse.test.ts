import { describe, expect, it } from 'vitest';
import { SseParser } from '../../src/core/sse-parser.ts';
import { encodeComment, encodeEvent, type SseEvent } from '../../src/core/sse.ts';

/**
 * A minimal parser following the WHATWG "Server-sent events" interpretation rules, to check
 * that what the encoder writes is what a client reads back.
 */
function parseSse(stream: string): { events: { data: string; lastEventId: string }[]; lastEventId: string; retry?: number } {
  const events: { data: string; lastEventId: string }[] = [];
  let data = '';
  let lastEventId = '';
  let retry: number | undefined;
  const lines = stream.split(/\r\n|\r|\n/);
  lines.pop(); // the text after the final line break is an incomplete line
  for (const line of lines) {
    if (line === '') {
      // "If the data buffer is an empty string, [...] return"; only then is one trailing LF removed.
      if (data !== '') events.push({ data: data.endsWith('\n') ? data.slice(0, -1) : data, lastEventId });
      data = '';
      continue;
    }
    if (line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') data += `${value}\n`;
    else if (field === 'id' && !value.includes('\0')) lastEventId = value;
    else if (field === 'retry' && /^[0-9]+$/.test(value)) retry = Number(value);
  }
  return retry === undefined ? { events, lastEventId } : { events, lastEventId, retry };
}

describe('encodeEvent', () => {
  it.each<{ name: string; event: SseEvent; frame: string }>([
    {
      name: 'writes an id line, a data line and the dispatching blank line',
      event: { id: '1-2-3', data: '{}' },
      frame: 'id: 1-2-3\ndata: {}\n\n',
    },
    {
      name: 'writes a priming event with empty data as one empty data line',
      event: { id: '1-2-0', data: '' },
      frame: 'id: 1-2-0\ndata: \n\n',
    },
    {
      name: 'writes the retry field between id and data',
      event: { id: '1-2-0', data: '', retry: 1000 },
      frame: 'id: 1-2-0\nretry: 1000\ndata: \n\n',
    },
    { name: 'writes a zero retry', event: { id: '1-2-0', data: '', retry: 0 }, frame: 'id: 1-2-0\nretry: 0\ndata: \n\n' },
    {
      name: 'splits LF-separated data into one data line per line',
      event: { id: '1-2-3', data: 'a\nb' },
      frame: 'id: 1-2-3\ndata: a\ndata: b\n\n',
    },
    {
      name: 'splits CRLF-separated data, treating CRLF as one break',
      event: { id: '1-2-3', data: 'a\r\nb' },
      frame: 'id: 1-2-3\ndata: a\ndata: b\n\n',
    },
    { name: 'splits CR-separated data', event: { id: '1-2-3', data: 'a\rb' }, frame: 'id: 1-2-3\ndata: a\ndata: b\n\n' },
    {
      name: 'splits mixed line breaks',
      event: { id: '1-2-3', data: 'a\r\nb\rc\nd' },
      frame: 'id: 1-2-3\ndata: a\ndata: b\ndata: c\ndata: d\n\n',
    },
    {
      name: 'keeps a trailing line break as a final empty data line',
      event: { id: '1-2-3', data: 'a\n' },
      frame: 'id: 1-2-3\ndata: a\ndata: \n\n',
    },
    {
      name: 'keeps blank lines inside data as empty data lines',
      event: { id: '1-2-3', data: 'a\n\nb' },
      frame: 'id: 1-2-3\ndata: a\ndata: \ndata: b\n\n',
    },
    { name: 'treats LF CR as two breaks', event: { id: '1-2-3', data: 'a\n\rb' }, frame: 'id: 1-2-3\ndata: a\ndata: \ndata: b\n\n' },
    {
      name: 'keeps a leading space of the data after the field separator',
      event: { id: '1-2-3', data: ' x' },
      frame: 'id: 1-2-3\ndata:  x\n\n',
    },
    { name: 'keeps colons inside data', event: { id: '1-2-3', data: 'a: b' }, frame: 'id: 1-2-3\ndata: a: b\n\n' },
    { name: 'keeps non-ASCII data as is', event: { id: '1-2-3', data: '"é€😀"' }, frame: 'id: 1-2-3\ndata: "é€😀"\n\n' },
    {
      name: 'writes a JSON-RPC message verbatim',
      event: { id: '7-1-12', data: '{"jsonrpc":"2.0","id":1,"result":{}}' },
      frame: 'id: 7-1-12\ndata: {"jsonrpc":"2.0","id":1,"result":{}}\n\n',
    },
  ])('$name', ({ event, frame }) => {
    expect(encodeEvent(event)).toBe(frame);
  });

  it.each([
    { name: 'LF', id: '1-2\n-3' },
    { name: 'CR', id: '1-2\r-3' },
    { name: 'CRLF', id: '1-2\r\n-3' },
    { name: 'a trailing LF', id: '1-2-3\n' },
  ])('refuses an id containing $name with a TypeError', ({ id }) => {
    expect(() => encodeEvent({ id, data: '' })).toThrow(new TypeError('an SSE event id cannot contain a line break'));
  });

  it.each([
    { name: 'single-line data', data: '{"a":1}', read: '{"a":1}' },
    { name: 'LF multi-line data', data: 'a\nb\nc', read: 'a\nb\nc' },
    { name: 'CRLF multi-line data, normalised to LF', data: 'a\r\nb', read: 'a\nb' },
    { name: 'CR multi-line data, normalised to LF', data: 'a\rb', read: 'a\nb' },
    { name: 'data ending in a line break', data: 'a\n', read: 'a\n' },
    { name: 'data with a leading space', data: ' x', read: ' x' },
    { name: 'data that is a single line break', data: '\n', read: '\n' },
  ])('is read back by an SSE client as the same $name', ({ data, read }) => {
    expect(parseSse(encodeEvent({ id: '3-4-5', data }))).toEqual({ events: [{ data: read, lastEventId: '3-4-5' }], lastEventId: '3-4-5' });
  });

  it('a priming event sets the client cursor and retry, and carries an empty data field (SEP-1699)', () => {
    expect(parseSse(encodeEvent({ id: '3-4-0', data: '', retry: 2500 }))).toEqual({
      events: [{ data: '', lastEventId: '3-4-0' }],
      lastEventId: '3-4-0',
      retry: 2500,
    });
  });

  it('consecutive frames are read back as separate events, each with its own id', () => {
    const stream =
      encodeEvent({ id: '1-1-0', data: '', retry: 10 }) +
      encodeEvent({ id: '1-1-1', data: 'x' }) +
      encodeComment('keepalive') +
      encodeEvent({ id: '1-1-2', data: 'y\nz' });
    expect(parseSse(stream)).toEqual({
      events: [
        { data: '', lastEventId: '1-1-0' },
        { data: 'x', lastEventId: '1-1-1' },
        { data: 'y\nz', lastEventId: '1-1-2' },
      ],
      lastEventId: '1-1-2',
      retry: 10,
    });
  });
});

describe('encodeComment', () => {
  it.each([
    { name: 'frames text as a comment line and a blank line', text: 'keepalive', frame: ': keepalive\n\n' },
    { name: 'frames empty text as a bare comment', text: '', frame: ': \n\n' },
    { name: 'replaces an LF with a space', text: 'a\nb', frame: ': a b\n\n' },
    { name: 'replaces a CR with a space', text: 'a\rb', frame: ': a b\n\n' },
    { name: 'replaces a run of line breaks with one space', text: 'a\r\n\r\nb', frame: ': a b\n\n' },
    { name: 'replaces a trailing line break with a space', text: 'x\n', frame: ': x \n\n' },
    { name: 'keeps colons', text: 'a: b', frame: ': a: b\n\n' },
  ])('$name', ({ text, frame }) => {
    expect(encodeComment(text)).toBe(frame);
  });

  it.each([{ text: 'keepalive' }, { text: 'data: injected\n\nid: 9-9-9' }])('is ignored by an SSE client: $text', ({ text }) => {
    expect(parseSse(encodeComment(text))).toEqual({ events: [], lastEventId: '' });
  });
});

describe('encodeEvent refuses a retry that is not a non-negative integer', () => {
  it.each([1500.9, -5, Number.NaN, Number.POSITIVE_INFINITY])('%s', (retry) => {
    expect(() => encodeEvent({ id: '1-2-0', data: '', retry })).toThrow(RangeError);
  });
});

describe('SseParser, for the data of each event', () => {
  it.each<[string, string[], string[]]>([
    ['one event in one chunk', ['data: {}\n\n'], ['{}']],
    ['an event split across chunks', ['data: {"a"', ':1}\n', '\n'], ['{"a":1}']],
    ['CRLF line breaks, split between CR and LF', ['data: x\r', '\n\r\n'], ['x']],
    ['comments and other fields', [': ping\n\nevent: message\nid: 7\ndata: y\n\n'], ['y']],
    ['multi-line data, joined with LF', ['data: a\ndata: b\n\n'], ['a\nb']],
    ['an unfinished event', ['data: z\n'], []],
  ])('%s', (_name, chunks, expected) => {
    const parser = new SseParser();
    expect(chunks.flatMap((chunk) => parser.push(chunk)).flatMap(({ data }) => (data === undefined ? [] : [data]))).toEqual(expected);
  });

  it('reads back what encodeEvent writes', () => {
    const parser = new SseParser();
    expect(parser.push(encodeEvent({ id: '1-2-3', data: 'line one\nline two' })).map(({ data }) => data)).toEqual(['line one\nline two']);
  });
});
