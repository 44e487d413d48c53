/**
 * What a session takes on disk, not only in message bytes (docs/wire-contract.md, *Bounds*).
 * Measured with `sql.databaseSize`, the SQLite file the platform stores and bills:
 * - an event takes about its size: the events table is a rowid b-tree (event-key.ts), where a
 *   row of up to ~4 KB stays in its page; keyed WITHOUT ROWID, an event of 1.1 KB took 4.7 KB;
 * - the request ids a session keeps are bounded in number (MAX_SESSION_REQUESTS) and size
 *   as stored (262 bytes JSON-escaped twice, jsonrpc.ts), and a batch in messages (100): the
 *   attack that grew one session's file to 1.0 GB (20 POSTs of 3,800 pings with 1,024-character
 *   ids) is now refused at its first message over a bound, and so are ids of 256 bytes padded
 *   with U+0001 (8.9 KB on disk a request when the bound was on the bytes sent); the worst id
 *   admitted, in the worst order, takes ~1.2 KB a request with its answer.
 */
import { runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { expect, it } from 'vitest';
import { MAX_BATCH_MESSAGES, MAX_REQUEST_ID_BYTES } from '../../src/core/jsonrpc.ts';
import { SessionStore } from '../../src/session/session-store.ts';
import { SessionStreams } from '../../src/session/session-streams.ts';
import { errorOf, initializeRequest, openSession, postRaw, type Session, type Version } from '../support/mcp-http.ts';
import { inNewObject, streamOptions } from '../support/session-fixture.ts';

/** Bytes on disk per event, for `count` events of `size` bytes stored as the session stores them. */
function diskPerEvent(size: number, count = 2_000): Promise<number> {
  return inNewObject((storage) => {
    const streams = new SessionStreams(storage, new SessionStore(storage.sql), streamOptions());
    const { stream } = streams.openRequestStream(1, ['"call"']);
    const message = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { data: 'x'.repeat(size - 71) } });
    expect(message.length).toBe(size);
    const before = storage.sql.databaseSize;
    for (let i = 0; i < count; i++) streams.emit(stream, message);
    void streams.log; // stores what is held
    return (storage.sql.databaseSize - before) / count;
  });
}

it.each([
  { size: 200, atMost: 260 },
  // Just over SQLite's local limit for a WITHOUT ROWID row: 4.7 KB each in that layout.
  { size: 1_100, atMost: 1_400 },
  // The worst case of page packing: one row a page, two would not fit.
  { size: 2_100, atMost: 4_200 },
  { size: 8_000, atMost: 8_300 },
])('an event of $size bytes takes at most $atMost bytes on disk', async ({ size, atMost }) => {
  expect(await diskPerEvent(size)).toBeLessThanOrEqual(atMost);
});

it("the 1 GB batch attack: over-long ids and batches are refused whole, and the largest allowed ones keep the session's file small", async () => {
  const session = await openSession('2025-03-26');
  const stub = env.MCP_SESSION.get(env.MCP_SESSION.idFromName(session.id));
  const size = () => runInDurableObject(stub, (_instance, state) => state.storage.sql.databaseSize);
  const pings = (count: number, idBytes: number, post: number) =>
    Array.from({ length: count }, (_, i) => ({ jsonrpc: '2.0', id: `${post}-${i}-`.padEnd(idBytes, 'i'), method: 'ping' }));

  // The attack as it was: 3,800 pings with 1,024-character ids, a 4 MB body.
  expect(await errorOf(await session.post(pings(3_800, 1_024, 0)))).toMatchObject({ status: 400, code: -32600 });
  expect(await errorOf(await session.post(pings(MAX_BATCH_MESSAGES, MAX_REQUEST_ID_BYTES + 1, 0)))).toMatchObject({
    status: 400,
    code: -32600,
  });

  const before = await size();
  for (let post = 1; post <= 20; post++) {
    const response = await session.post(pings(MAX_BATCH_MESSAGES, MAX_REQUEST_ID_BYTES, post));
    expect(response.status).toBe(200);
    await response.text();
  }
  const perRequest = ((await size()) - before) / (20 * MAX_BATCH_MESSAGES);
  // Each id is kept twice (requests, and its stream's row) beside its answer: ~880 bytes in
  // ascending order (the worst order is below).
  expect(perRequest).toBeLessThanOrEqual(1_000);
  // The session is still usable.
  expect((await session.post({ jsonrpc: '2.0', id: 'after', method: 'ping' })).status).toBe(200);
});

/**
 * What the documented bound on a request holds (docs/guarantees.md, *Known limits*): its id
 * where the session keeps it (the requests row, its stream's request list) and a ping's answer,
 * which repeats it, on disk.
 */
const MAX_DISK_BYTES_PER_REQUEST = 1_250;

/**
 * Every way JSON escapes a character, once (a key) and twice (a stream's request list), and the
 * widest UTF-8: the id that takes most on disk is one of these, padded as long as admitted.
 */
const PADDINGS = {
  ascii: 'i',
  control: '\u0001',
  newline: '\n',
  quote: '"',
  backslash: '\\',
  'lone surrogate': '\ud800',
  'two-byte': 'é',
  'three-byte': '€',
  'four-byte': '😀',
};
type Padding = keyof typeof PADDINGS;

/** Ids of one length in code units: 7 digits and a dash (ASCII), then the padding. */
const paddedId = (n: number, pad: string, count: number) => `${String(n).padStart(7, '0')}-${pad.repeat(count)}`;

let probes = 0;

/** The most `pad` characters an id of paddedId's form may have: asked of the server, not derived from its rule. */
async function longestAdmitted(session: Session, pad: string): Promise<number> {
  let admitted = 0;
  let refused = 257; // a character is one UTF-8 byte at least, and no bound admitted more than 256
  while (refused - admitted > 1) {
    const count = Math.floor((admitted + refused) / 2);
    const response = await session.post({ jsonrpc: '2.0', id: paddedId(probes++, pad, count), method: 'ping' });
    await response.text();
    if (response.status === 200) admitted = count;
    else {
      expect(response.status).toBe(400);
      refused = count;
    }
  }
  return admitted;
}

/**
 * Bytes on disk per request of `count` pings, `batch` to a POST, with ids of `pad` as long as
 * admitted, sent in descending order: the order that leaves the requests table's pages (keyed
 * by the id, WITHOUT ROWID) half full, where ascending ids fill them.
 */
async function diskPerRequest(version: Version, pad: string, padCount: number, count: number, batch: number): Promise<number> {
  const session = await openSession(version);
  const stub = env.MCP_SESSION.get(env.MCP_SESSION.idFromName(session.id));
  const size = () => runInDurableObject(stub, (_instance, state) => state.storage.sql.databaseSize);
  const before = await size();
  for (let sent = 0; sent < count; sent += batch) {
    const pings = Array.from({ length: batch }, (_, i) => ({
      jsonrpc: '2.0',
      id: paddedId(count - sent - i, pad, padCount),
      method: 'ping',
    }));
    const response = await session.post(batch === 1 ? pings[0] : pings);
    expect(response.status).toBe(200);
    await response.text();
  }
  return ((await size()) - before) / count;
}

it(`the worst request id admitted takes at most ${MAX_DISK_BYTES_PER_REQUEST} bytes on disk a request, its answer included`, async () => {
  const probes = await openSession('2025-11-25');
  const measured = {} as Record<Padding, number>;
  for (const [name, pad] of Object.entries(PADDINGS) as [Padding, string][]) {
    const padCount = await longestAdmitted(probes, pad);
    expect(padCount, `${name}: an id of it is admitted`).toBeGreaterThan(0);
    // Batches of 100 (2025-03-26): quick to send, a stream's row shared by 100 requests.
    measured[name] = await diskPerRequest('2025-03-26', pad, padCount, 500, 100);
    expect(measured[name], `${name}: ${padCount} characters of it, bytes a request`).toBeLessThanOrEqual(MAX_DISK_BYTES_PER_REQUEST);
  }
  // The worst of them, one request a POST: a stream's row each, the most a request takes.
  const [worst] = (Object.entries(measured) as [Padding, number][]).sort((a, b) => b[1] - a[1])[0]!;
  const pad = PADDINGS[worst];
  const single = await diskPerRequest('2025-11-25', pad, await longestAdmitted(probes, pad), 1_000, 1);
  expect(single, `${worst}, one request a POST: bytes a request`).toBeLessThanOrEqual(MAX_DISK_BYTES_PER_REQUEST);
}, 180_000);

it("an initialize request's id is bounded as the session stores it, as every request's", async () => {
  // Stored in the session row (initialize_key) and its stream's request list, and answered.
  const escaped = await postRaw(initializeRequest('2025-11-25', {}, '\u0001'.repeat(255)));
  expect(escaped.status).toBe(400);
  expect(escaped.headers.get('Mcp-Session-Id')).toBeNull();
  expect((await errorOf(escaped)).code).toBe(-32600);
  const plain = await postRaw(initializeRequest('2025-11-25', {}, 'i'.repeat(256)));
  expect(plain.status).toBe(200);
  await plain.body?.cancel();
});
