/**
 * What a session takes on disk, not only in message bytes (docs/wire-contract.md, *Bounds*).
 * Measured with `sql.databaseSize`, the SQLite file the platform stores and bills:
 * - an event takes about its size: the events table is a rowid b-tree (event-key.ts), where a
 *   row of up to ~4 KB stays in its page; keyed WITHOUT ROWID, an event of 1.1 KB took 4.7 KB;
 * - the request ids a session keeps are bounded in number (MAX_SESSION_REQUESTS) and size
 *   (256 bytes), and a batch in messages (100): the attack that grew one session's file to
 *   1.0 GB (20 POSTs of 3,800 pings with 1,024-character ids) is now refused at its first
 *   message over a bound, and what the largest allowed batches store stays small.
 */
import { runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { expect, it } from 'vitest';
import { MAX_BATCH_MESSAGES, MAX_REQUEST_ID_BYTES } from '../../src/core/jsonrpc.ts';
import { SessionStore } from '../../src/session/session-store.ts';
import { SessionStreams } from '../../src/session/session-streams.ts';
import { errorOf, openSession } from '../support/mcp-http.ts';
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
  // Each id is kept twice (requests, and its stream's row) beside its answer: ~900 bytes at most.
  expect(perRequest).toBeLessThanOrEqual(1_000);
  // The session is still usable.
  expect((await session.post({ jsonrpc: '2.0', id: 'after', method: 'ping' })).status).toBe(200);
});
