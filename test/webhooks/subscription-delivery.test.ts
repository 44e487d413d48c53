/**
 * A webhook subscription's object delivering (src/events/webhook-object.ts; docs/events.md,
 * *Webhooks*), called as the Worker and the log call it: `create`, then occurrences appended to
 * demo.note's log and a poke. What a receiver on 127.0.0.1 got is read back and verified with
 * the library's own verifier.
 */
import { describe, expect, it } from 'vitest';
import { SUBSCRIPTION_ID_HEADER, WEBHOOK_ID_HEADER } from '../../src/core/events-webhook-wire.ts';
import {
  cursorOf,
  detachFromLog,
  note,
  pokeToHead,
  type Received,
  receivedUntil,
  rowsWritten,
  SECRET_A,
  subscribe,
  verifiesUnder,
} from '../support/webhook-subscription.ts';

const header = (request: Received, name: string) => request.headers[name.toLowerCase()];
const bodyOf = (request: Received) => JSON.parse(request.body) as { eventId: string; name: string; data: { text: string }; cursor: string };

describe('delivery of new occurrences', () => {
  it('each matching occurrence is POSTed once, signed, webhook-id = its eventId, X-MCP-Subscription-Id = the id; others are not', async () => {
    const { id, stub, endpoint, tok } = await subscribe();
    const a = await note(`${tok} one`);
    await note('someone else entirely');
    const b = await note(`${tok} two`);
    expect(await pokeToHead(stub)).toBe('processed');
    const log = await receivedUntil(endpoint, (l) => l.length >= 2);
    expect(log.map((r) => bodyOf(r).data.text).sort()).toEqual([`${tok} one`, `${tok} two`]);
    expect(log.map((r) => header(r, WEBHOOK_ID_HEADER)).sort()).toEqual([a.eventId, b.eventId].sort());
    for (const request of log) {
      expect(await verifiesUnder(request, SECRET_A)).toBe(true);
      expect(header(request, SUBSCRIPTION_ID_HEADER)).toBe(id);
      expect(bodyOf(request).name).toBe('demo.note');
    }
    // A second poke to the same head delivers nothing again.
    expect(await pokeToHead(stub)).toBe('processed');
    expect(await receivedUntil(endpoint, () => true)).toHaveLength(2);
  });

  it('the log pokes by itself: an append alone is delivered, with no poke from the test', async () => {
    const { endpoint, tok } = await subscribe();
    const { eventId } = await note(`${tok} unpoked`);
    const [request] = await receivedUntil(endpoint, (l) => l.length >= 1, 'the delivery the log poked');
    expect(request!.headers[WEBHOOK_ID_HEADER.toLowerCase()]).toBe(eventId);
  });

  it("a body's cursor never passes an occurrence not yet acknowledged: each is at most its own seq; the refresh's is past the last", async () => {
    const { stub, endpoint, tok } = await subscribe();
    const appended = [];
    for (let i = 0; i < 6; i++) appended.push(await note(`${tok} ${i}`));
    await pokeToHead(stub);
    const log = await receivedUntil(endpoint, (l) => l.length >= 6);
    const seqOf = new Map(appended.map((a) => [a.eventId, a.seq]));
    for (const request of log) {
      const cursor = await cursorOf(request);
      expect(cursor.next).toBeLessThanOrEqual(seqOf.get(bodyOf(request).eventId)!);
      expect(cursor.next).toBeGreaterThanOrEqual(appended[0]!.seq);
    }
    const description = await stub.describe();
    expect(description?.watermarkSeq).toBe(appended.at(-1)!.seq + 1);
    expect(description?.failing).toBe(0);
  });

  it('delivered at the first attempt: at most 1 row written per delivery batch (the position), none per occurrence', async () => {
    const { id, stub, endpoint, tok } = await subscribe();
    await detachFromLog(id);
    const before = await rowsWritten(id);
    for (let i = 0; i < 5; i++) await note(`${tok} batch ${i}`);
    await pokeToHead(stub);
    await receivedUntil(endpoint, (l) => l.length >= 5);
    expect((await rowsWritten(id)) - before).toBe(1);
    // A poke with nothing new writes nothing.
    await pokeToHead(stub);
    expect((await rowsWritten(id)) - before).toBe(1);
  });
});
