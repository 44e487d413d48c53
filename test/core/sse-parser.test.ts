import { describe, expect, it } from 'vitest';
import { SseParser, type SseFrame } from '../../src/core/sse-parser.ts';

const parse = (...chunks: string[]): SseFrame[] => {
  const parser = new SseParser();
  return [...chunks.flatMap((chunk) => parser.push(chunk)), ...parser.end()];
};

describe('SseParser', () => {
  it.each<{ name: string; chunks: string[]; frames: SseFrame[] }>([
    { name: 'an event with id and data', chunks: ['id: 1-2-3\ndata: {}\n\n'], frames: [{ id: '1-2-3', data: '{}' }] },
    {
      name: 'the priming event: id, retry and empty data',
      chunks: ['id: 1-2-0\nretry: 1000\ndata: \n\n'],
      frames: [{ id: '1-2-0', retry: 1000, data: '' }],
    },
    { name: 'an id with no data field', chunks: ['id: 1-2-0\n\n'], frames: [{ id: '1-2-0' }] },
    { name: 'several data lines joined with LF', chunks: ['id: 7\ndata: a\ndata: b\n\n'], frames: [{ id: '7', data: 'a\nb' }] },
    {
      name: 'CRLF and CR line endings',
      chunks: ['id: 1\r\ndata: x\r\n\r\nid: 2\rdata: y\r\r'],
      frames: [
        { id: '1', data: 'x' },
        { id: '2', data: 'y' },
      ],
    },
    {
      name: 'a CRLF split across chunks is one line break',
      chunks: ['id: 1\r', '\ndata: x\r', '\n\r', '\n'],
      frames: [{ id: '1', data: 'x' }],
    },
    { name: 'an event split at every point', chunks: [...'id: 1-2-3\ndata: {"a":1}\n\n'], frames: [{ id: '1-2-3', data: '{"a":1}' }] },
    { name: 'comments (the keepalive) are skipped', chunks: [': keepalive\n\nid: 1\ndata: x\n\n'], frames: [{ id: '1', data: 'x' }] },
    { name: 'only one space after the colon is dropped', chunks: ['data:  x\ndata:y\n\n'], frames: [{ data: ' x\ny' }] },
    { name: 'a field with no colon has an empty value', chunks: ['data\nid\n\n'], frames: [{ id: '', data: '' }] },
    { name: 'an id containing NUL is ignored', chunks: ['id: a\0b\ndata: x\n\n'], frames: [{ data: 'x' }] },
    { name: 'a retry that is not all digits is ignored', chunks: ['retry: 1e3\nretry: -5\ndata: x\n\n'], frames: [{ data: 'x' }] },
    { name: 'a lone retry is still reported', chunks: ['retry: 250\n\n'], frames: [{ retry: 250 }] },
    { name: 'the event type is kept', chunks: ['event: ping\ndata: x\n\n'], frames: [{ data: 'x', event: 'ping' }] },
    { name: 'unknown fields are ignored', chunks: ['foo: bar\n\n'], frames: [] },
    { name: 'a CR ending the stream still ends its line', chunks: ['data: x\r\r'], frames: [{ data: 'x' }] },
    {
      name: 'an event without its blank line is never dispatched (a cut connection)',
      chunks: ['id: 1\ndata: x\n\nid: 2\ndata: y\n'],
      frames: [{ id: '1', data: 'x' }],
    },
    {
      name: 'a cut mid-line leaves nothing of the partial event',
      chunks: ['id: 1\ndata: x\n\nid: 2\ndata: {"jso'],
      frames: [{ id: '1', data: 'x' }],
    },
    { name: 'blank lines between events dispatch nothing', chunks: ['\n\n\nid: 1\ndata: x\n\n\n'], frames: [{ id: '1', data: 'x' }] },
  ])('$name', ({ chunks, frames }) => {
    expect(parse(...chunks)).toEqual(frames);
  });

  it('fields do not carry over from one event to the next', () => {
    expect(parse('id: 1\nretry: 5\nevent: e\ndata: x\n\ndata: y\n\n')).toEqual([
      { id: '1', retry: 5, event: 'e', data: 'x' },
      { data: 'y' },
    ]);
  });
});
