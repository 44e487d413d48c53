// node --test bench/harness/*.test.mjs  — the SSE parser the benchmark client relies on.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SseParser } from './sse.mjs';

const bytes = (text) => new TextEncoder().encode(text);
const fields = (events) => events.map(({ id, type, data, hasData }) => ({ id, type, data, hasData }));

/** Feeds `text` split at every given offset (as bytes) and collects every event. */
function parseSplit(text, offsets) {
  const all = bytes(text);
  const parser = new SseParser();
  const events = [];
  let from = 0;
  for (const at of [...offsets, all.length]) {
    events.push(...parser.push(all.subarray(from, at)));
    from = at;
  }
  events.push(...parser.end());
  return { events: fields(events), parser };
}

const STREAM =
  '\uFEFFid: 1-2-0\nretry: 1000\ndata:\n\n' +
  ': keepalive\n\n' +
  'id: 1-2-1\r\ndata: {"n":"é€𝄞"}\r\n\r\n' +
  'id: 1-2-2\rdata: line one\rdata:line two\r\r' +
  'event: custom\ndata: x\n\n';

const EXPECTED = [
  { id: '1-2-0', type: 'message', data: '', hasData: true },
  { id: '1-2-1', type: 'message', data: '{"n":"é€𝄞"}', hasData: true },
  { id: '1-2-2', type: 'message', data: 'line one\nline two', hasData: true },
  { id: '1-2-2', type: 'custom', data: 'x', hasData: true },
];

test('a whole stream in one chunk gives every event, with ids, multi-line data and all three line endings', () => {
  const { events, parser } = parseSplit(STREAM, []);
  assert.deepEqual(events, EXPECTED);
  assert.equal(parser.retry, 1000);
  assert.equal(parser.comments, 1);
  assert.equal(parser.lastEventId, '1-2-2');
});

test('every single split point, including inside UTF-8 sequences and between CR and LF, gives the same events', () => {
  const length = bytes(STREAM).length;
  for (let at = 1; at < length; at++) {
    assert.deepEqual(parseSplit(STREAM, [at]).events, EXPECTED, `split at byte ${at}`);
  }
});

test('byte-by-byte feeding gives the same events', () => {
  const length = bytes(STREAM).length;
  assert.deepEqual(
    parseSplit(
      STREAM,
      Array.from({ length: length - 1 }, (_, i) => i + 1),
    ).events,
    EXPECTED,
  );
});

test('a priming block with an id and no data field is reported with empty data', () => {
  const { events } = parseSplit('id: 3-1-0\nretry: 500\n\n', []);
  assert.deepEqual(events, [{ id: '3-1-0', type: 'message', data: '', hasData: false }]);
});

test('a block with only retry or only comments dispatches nothing', () => {
  const { events, parser } = parseSplit('retry: 250\n\n:one\n:two\n\n', []);
  assert.deepEqual(events, []);
  assert.equal(parser.retry, 250);
  assert.equal(parser.comments, 2);
});

test('an invalid retry and an id containing NUL are ignored', () => {
  const { events, parser } = parseSplit('retry: 1x\nid: a\0b\ndata: d\n\n', []);
  assert.equal(parser.retry, undefined);
  assert.deepEqual(events, [{ id: '', type: 'message', data: 'd', hasData: true }]);
});

test('an event not closed by a blank line before end of stream is dropped', () => {
  const { events } = parseSplit('id: 1\ndata: done\n\nid: 2\ndata: cut', []);
  assert.deepEqual(events, [{ id: '1', type: 'message', data: 'done', hasData: true }]);
});

test('a line without a colon is a field with an empty value; one leading space only is stripped', () => {
  const { events } = parseSplit('data\ndata:  two spaces\n\n', []);
  assert.deepEqual(events, [{ id: '', type: 'message', data: '\n two spaces', hasData: true }]);
});
