/**
 * Revoking a principal's grant closes its listen streams on every bus shard (event-bus.ts,
 * bus-object.ts), and only its: each stream's socket is kept under its owner's tag, a socket so
 * closed is not reopened, and its owner is told once. Over the fixture's real bus objects,
 * under names of each test's own so that no test hears another's sockets.
 */
import { abortAllDurableObjects, runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { McpServer, type ServerEvent } from '@modelcontextprotocol/server';
import { describe, expect, it, type Mock, vi } from 'vitest';
import { BUS_ROUTES, INTERNAL_HEADERS } from '../../src/core/wire.ts';
import {
  busShardName,
  busShardSockets,
  DurableEventBus,
  type BusObject,
  listenScope,
  type ListenOwner,
} from '../../src/stateless/event-bus.ts';
import { createModernEndpoint } from '../../src/stateless/modern-endpoint.ts';
import { revokedListenFrame, serveEndableListen, unreachableListenFrame } from '../../src/stateless/endable-listen.ts';
import { ANONYMOUS } from '../../src/auth/principal.ts';
import { readConfig } from '../../src/config.ts';
import { serveModern } from '../../src/edge/modern-route.ts';
import { StreamShares } from '../../src/edge/stream-shares.ts';
import { ENDED, SseReader } from '../support/sse-reader.ts';
import { MODERN } from '../support/modern-http.ts';
import { MARK_KEPT_MS } from '../../src/stateless/bus-object.ts';

const SHARDS = 3;

/** Bus shards named for one test alone. */
function shardsOf() {
  const prefix = crypto.randomUUID();
  return (index: number) => env.MCP_BUS.get(env.MCP_BUS.idFromName(`${prefix}/${busShardName(index)}`));
}

const newTag = () => [...crypto.getRandomValues(new Uint8Array(16))].map((byte) => byte.toString(16).padStart(2, '0')).join('');

function ownerOf(
  tag: string,
  ...more: string[]
): ListenOwner & { tag: string; tags: string[]; revoked: Mock<() => void>; unreachable: Mock<() => void> } {
  return { tag, tags: [tag, ...more], revoked: vi.fn<() => void>(), unreachable: vi.fn<() => void>() };
}

/** A listener that keeps what it hears, subscribed under `owner` (none: untagged). */
function listen(bus: DurableEventBus, owner?: ListenOwner): { heard: ServerEvent[]; unsubscribe: () => void } {
  const heard: ServerEvent[] = [];
  const subscribe = () => bus.subscribe((event) => heard.push(event));
  return { heard, unsubscribe: owner === undefined ? subscribe() : listenScope.run(owner, subscribe) };
}

async function until(what: string, condition: () => boolean | Promise<boolean>, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await scheduler.wait(10);
  }
}

const total = (counts: number[]) => counts.reduce((a, b) => a + b, 0);
/** What a revocation of listens alone closed: `n` listens, no event streams. */
const listens = (n: number) => ({ listens: n, events: 0 });

describe('a revocation of listen streams', () => {
  it('closes the streams of its tag only: the others still hear, the revoked one is told once and never reconnects', async () => {
    const shard = shardsOf();
    const bus = new DurableEventBus(shard, SHARDS);
    const [ownerA, ownerB] = [ownerOf(newTag()), ownerOf(newTag())];
    // Dealt in turn: A on shard 0, B on shard 1, the untagged one on shard 2.
    const a = listen(bus, ownerA);
    const b = listen(bus, ownerB);
    const untagged = listen(bus);
    try {
      await until('every socket is open', async () => total(await busShardSockets(shard, SHARDS)) === 3);
      expect(await runInDurableObject(shard(0), (_instance, state) => state.getWebSockets(ownerA.tag).length)).toBe(1);
      expect(await runInDurableObject(shard(1), (_instance, state) => state.getWebSockets(ownerB.tag).length)).toBe(1);

      bus.publish({ kind: 'tools_list_changed' });
      await until('all three hear the first change', () => [a, b, untagged].every(({ heard }) => heard.length === 1));

      expect(await bus.revoke(ownerA.tag)).toEqual(listens(1));
      await until('A is told', () => ownerA.revoked.mock.calls.length > 0);
      bus.publish({ kind: 'prompts_list_changed' });
      await until('B and the untagged one hear the next change', () => b.heard.length === 2 && untagged.heard.length === 2);
      // Past the first reconnection delay (100 ms): a reconnect would also bring A spare list_changed events.
      await scheduler.wait(300);
      expect(a.heard).toEqual([{ kind: 'tools_list_changed' }]);
      expect(ownerA.revoked).toHaveBeenCalledTimes(1);
      expect(ownerB.revoked).not.toHaveBeenCalled();
      expect(b.heard.at(-1)).toEqual({ kind: 'prompts_list_changed' });
      expect(untagged.heard.at(-1)).toEqual({ kind: 'prompts_list_changed' });
      expect(await busShardSockets(shard, SHARDS), 'A’s socket stays closed').toEqual([0, 1, 1]);
    } finally {
      for (const { unsubscribe } of [a, b, untagged]) unsubscribe();
    }
  });

  it('counts the streams it closed on every shard, and finds none of a tag that has none', async () => {
    const shard = shardsOf();
    const bus = new DurableEventBus(shard, SHARDS);
    const tag = newTag();
    const owners = [ownerOf(tag), ownerOf(tag), ownerOf(tag), ownerOf(tag)];
    const listeners = owners.map((owner) => listen(bus, owner));
    try {
      await until('every socket is open', async () => total(await busShardSockets(shard, SHARDS)) === 4);
      expect(await bus.revoke(newTag())).toEqual(listens(0));
      expect(await bus.revoke(tag)).toEqual(listens(4));
      await until('every owner is told', () => owners.every((owner) => owner.revoked.mock.calls.length === 1));
      expect(await bus.revoke(tag), 'nothing left to close').toEqual(listens(0));
    } finally {
      for (const { unsubscribe } of listeners) unsubscribe();
    }
  });

  it('fails naming a shard it could not revoke on, having closed the streams of the others', async () => {
    const shard = shardsOf();
    const broken: BusObject = (index) => ({
      fetch: (request) =>
        index === 1 && new URL(request.url).pathname === BUS_ROUTES.revoke
          ? Promise.resolve(new Response(null, { status: 503 }))
          : shard(index).fetch(request),
    });
    const bus = new DurableEventBus(broken, SHARDS);
    const tag = newTag();
    const owners = [ownerOf(tag), ownerOf(tag), ownerOf(tag)];
    const listeners = owners.map((owner) => listen(bus, owner));
    try {
      await until('every socket is open', async () => total(await busShardSockets(shard, SHARDS)) === 3);
      await expect(bus.revoke(tag)).rejects.toThrow(/bus shard 1 .*503/);
      await until(
        'the streams of shards 0 and 2 are told',
        () => owners[0]!.revoked.mock.calls.length + owners[2]!.revoked.mock.calls.length === 2,
      );
      expect(owners[1]!.revoked).not.toHaveBeenCalled();
    } finally {
      for (const { unsubscribe } of listeners) unsubscribe();
    }
  });

  it('reaches a stream that reconnected after its bus object went away: the new socket carries the tag too', async () => {
    const shard = shardsOf();
    const bus = new DurableEventBus(shard, 1);
    const owner = ownerOf(newTag());
    const listener = listen(bus, owner);
    try {
      await until('the socket is open', async () => total(await busShardSockets(shard, 1)) === 1);
      await abortAllDurableObjects();
      await until('it reconnected (told its lists may have changed)', () => listener.heard.length === 3);
      await until('the new socket is open', async () => total(await busShardSockets(shard, 1)) === 1);
      expect(await bus.revoke(owner.tag)).toEqual(listens(1));
      await until('the owner is told', () => owner.revoked.mock.calls.length === 1);
    } finally {
      listener.unsubscribe();
    }
  });

  it('does not miss a stream that was away when it came: reconnecting, it is refused and its owner told, while a new stream of the tag is served', async () => {
    const shard = shardsOf();
    const bus = new DurableEventBus(shard, 1);
    const owner = ownerOf(newTag());
    const away = listen(bus, owner);
    let after: ReturnType<typeof listen> | undefined;
    try {
      await until('the socket is open', async () => total(await busShardSockets(shard, 1)) === 1);
      // The shard restarts: the socket is lost, and the stream waits to reconnect (100 ms first).
      await abortAllDurableObjects();
      expect(await bus.revoke(owner.tag), 'nothing open to close').toEqual(listens(0));
      await until('the owner is told', () => owner.revoked.mock.calls.length === 1);
      await scheduler.wait(300);
      expect(await busShardSockets(shard, 1), 'the revoked stream did not come back').toEqual([0]);
      expect(away.heard, 'no spare list_changed from a reconnection').toEqual([]);
      expect(owner.revoked).toHaveBeenCalledTimes(1);
      // A stream opened after the revocation (another grant of the principal's) is not refused.
      const next = ownerOf(owner.tag);
      after = listen(bus, next);
      await until('its socket is open', async () => total(await busShardSockets(shard, 1)) === 1);
      bus.publish({ kind: 'tools_list_changed' });
      await until('it hears', () => after!.heard.length === 1);
      expect(next.revoked).not.toHaveBeenCalled();
    } finally {
      away.unsubscribe();
      after?.unsubscribe();
    }
  });

  it('reaches a stream by either of its tags: its grant’s closes it and not another grant’s stream; its principal’s closes every one', async () => {
    const shard = shardsOf();
    const bus = new DurableEventBus(shard, SHARDS);
    const [principal, grantA, grantB] = [newTag(), newTag(), newTag()];
    // Two grants' streams of one principal (AUTH=oauth), and one with no grant (AUTH=jwt).
    const [a, b, none] = [ownerOf(principal, grantA), ownerOf(principal, grantB), ownerOf(principal)];
    const listeners = [a, b, none].map((owner) => listen(bus, owner));
    try {
      await until('every socket is open', async () => total(await busShardSockets(shard, SHARDS)) === 3);
      expect(await bus.revoke(grantA)).toEqual(listens(1));
      await until('A is told', () => a.revoked.mock.calls.length === 1);
      await scheduler.wait(100);
      expect(b.revoked).not.toHaveBeenCalled();
      expect(none.revoked).not.toHaveBeenCalled();
      expect(total(await busShardSockets(shard, SHARDS)), 'B’s and the grantless one’s stay open').toBe(2);
      expect(await bus.revoke(principal)).toEqual(listens(2));
      await until('B and the grantless one are told', () => b.revoked.mock.calls.length === 1 && none.revoked.mock.calls.length === 1);
      expect(a.revoked).toHaveBeenCalledTimes(1);
    } finally {
      for (const { unsubscribe } of listeners) unsubscribe();
    }
  });

  it('counts revocations per tag: a stream away while another grant was revoked comes back; away while its own was, it is refused', async () => {
    const shard = shardsOf();
    const bus = new DurableEventBus(shard, 1);
    const [principal, grantA, grantB] = [newTag(), newTag(), newTag()];
    const owner = ownerOf(principal, grantA);
    const listener = listen(bus, owner);
    try {
      await until('the socket is open', async () => total(await busShardSockets(shard, 1)) === 1);
      await abortAllDurableObjects();
      expect(await bus.revoke(grantB), 'another grant of the principal: nothing of this stream’s').toEqual(listens(0));
      await until('it reconnected (told its lists may have changed)', () => listener.heard.length === 3);
      await until('its new socket is open', async () => total(await busShardSockets(shard, 1)) === 1);
      expect(owner.revoked).not.toHaveBeenCalled();
      await abortAllDurableObjects();
      expect(await bus.revoke(grantA), 'its own grant, while it is away').toEqual(listens(0));
      await until('the owner is told', () => owner.revoked.mock.calls.length === 1);
      await scheduler.wait(300);
      expect(await busShardSockets(shard, 1), 'the revoked stream did not come back').toEqual([0]);
    } finally {
      listener.unsubscribe();
    }
  });

  it('counts and closes the streams of a tag by kind: listens apart from event streams, on every shard', async () => {
    const shard = shardsOf();
    const bus = new DurableEventBus(shard, SHARDS);
    const [principal, other] = [newTag(), newTag()];
    const owners = [
      ownerOf(principal),
      { ...ownerOf(principal), kind: 'events' as const },
      { ...ownerOf(principal), kind: 'events' as const },
    ];
    const others = [ownerOf(other), { ...ownerOf(other), kind: 'events' as const }];
    const listeners = [...owners, ...others].map((owner) => listen(bus, owner));
    try {
      await until('every socket is open', async () => total(await busShardSockets(shard, SHARDS)) === 5);
      expect(await bus.streams(principal)).toEqual({ listens: 1, events: 2 });
      expect(await bus.streams(other)).toEqual({ listens: 1, events: 1 });
      expect(await bus.streams(newTag()), 'a tag with none').toEqual({ listens: 0, events: 0 });
      expect(await bus.revoke(principal)).toEqual({ listens: 1, events: 2 });
      await until('every owner of the tag is told', () => owners.every((owner) => owner.revoked.mock.calls.length === 1));
      expect(await bus.streams(principal), 'closed: none left open').toEqual({ listens: 0, events: 0 });
      expect(await bus.streams(other), 'the other tag’s, untouched').toEqual({ listens: 1, events: 1 });
      for (const owner of others) expect(owner.revoked).not.toHaveBeenCalled();
    } finally {
      for (const { unsubscribe } of listeners) unsubscribe();
    }
    await until('unsubscribed streams are not counted', async () => {
      const { listens, events } = await bus.streams(other);
      return listens + events === 0;
    });
  });

  it('fails a count naming a shard that did not answer', async () => {
    const shard = shardsOf();
    const broken: BusObject = (index) => ({
      fetch: (request) =>
        index === 2 && new URL(request.url).pathname === BUS_ROUTES.streams
          ? Promise.resolve(new Response(null, { status: 503 }))
          : shard(index).fetch(request),
    });
    await expect(new DurableEventBus(broken, SHARDS).streams(newTag())).rejects.toThrow(/streams not counted on bus shard 2 .*503/);
  });

  it('refuses a tag that is not 32 lowercase hex digits, before anything reaches the bus', async () => {
    const bus = new DurableEventBus(shardsOf(), SHARDS);
    await expect(bus.revoke('A'.repeat(32))).rejects.toThrow(RangeError);
    await expect(bus.streams('A'.repeat(32))).rejects.toThrow(RangeError);
    expect(() => listenScope.run(ownerOf('not-a-tag'), () => bus.subscribe(() => undefined))).toThrow(RangeError);
  });
});

describe('a bus object', () => {
  it.each([
    ['upper-case hex', 'A'.repeat(32)],
    ['31 digits', 'a'.repeat(31)],
    ['33 digits', 'a'.repeat(33)],
    ['not hex', 'g'.repeat(32)],
    ['empty', ''],
    ['one tag twice', `${'a'.repeat(32)} ${'a'.repeat(32)}`],
    ['three tags', ['a', 'b', 'c'].map((digit) => digit.repeat(32)).join(' ')],
    ['two spaces between two', `${'a'.repeat(32)}  ${'b'.repeat(32)}`],
    ['a comma between two', `${'a'.repeat(32)},${'b'.repeat(32)}`],
  ])('refuses a subscription tagged with %s (400)', async (_name, tag) => {
    const response = await shardsOf()(0).fetch(
      new Request(`https://bus.internal${BUS_ROUTES.subscribe}`, { headers: { Upgrade: 'websocket', [INTERNAL_HEADERS.listenTag]: tag } }),
    );
    expect(response.status).toBe(400);
    expect(response.webSocket).toBeNull();
  });

  it.each([
    ['an unknown kind', 'task'],
    ['upper case', 'EVENTS'],
    ['empty', ''],
    ['two kinds', 'listen events'],
  ])('refuses a subscription whose stream kind is %s (400)', async (_name, kind) => {
    const response = await shardsOf()(0).fetch(
      new Request(`https://bus.internal${BUS_ROUTES.subscribe}`, {
        headers: { Upgrade: 'websocket', [INTERNAL_HEADERS.listenTag]: newTag(), [INTERNAL_HEADERS.busStreamKind]: kind },
      }),
    );
    expect(response.status).toBe(400);
    expect(response.webSocket).toBeNull();
  });

  it.each([
    ['no tag', ''],
    ['a tag of the wrong shape', `?tag=${'A'.repeat(32)}`],
    ['an empty tag', '?tag='],
  ])('refuses a count of streams with %s (400)', async (_name, query) => {
    const response = await shardsOf()(0).fetch(new Request(`https://bus.internal${BUS_ROUTES.streams}${query}`));
    expect(response.status).toBe(400);
  });

  it('answers a tagged subscription with its tag’s revocations, and refuses a reconnection that saw fewer (403)', async () => {
    const object = shardsOf()(0);
    const tag = newTag();
    const subscribe = (seen?: string) =>
      object.fetch(
        new Request(`https://bus.internal${BUS_ROUTES.subscribe}`, {
          headers: {
            Upgrade: 'websocket',
            [INTERNAL_HEADERS.listenTag]: tag,
            ...(seen !== undefined && { [INTERNAL_HEADERS.listenRevocations]: seen }),
          },
        }),
      );
    const opened: WebSocket[] = [];
    const accepted = async (seen?: string) => {
      const response = await subscribe(seen);
      expect(response.status).toBe(101);
      response.webSocket!.accept();
      opened.push(response.webSocket!);
      return response.headers.get(INTERNAL_HEADERS.listenRevocations);
    };
    try {
      expect(await accepted(), 'none yet').toBe('0');
      const revoke = () =>
        object.fetch(new Request(`https://bus.internal${BUS_ROUTES.revoke}`, { method: 'POST', body: JSON.stringify({ tag }) }));
      expect(await (await revoke()).json()).toEqual(listens(1));
      expect((await subscribe('0')).status, 'away when it came').toBe(403);
      const first = (await accepted())!;
      expect(Number(first), 'a new stream sees the revocation’s mark').toBeGreaterThan(0);
      expect(await accepted(first), 'subscribed after it').toBe(first);
      await revoke();
      expect((await subscribe(first)).status).toBe(403);
      const second = (await accepted())!;
      expect(Number(second), 'marks only move on').toBeGreaterThan(Number(first));
      expect(await accepted(second)).toBe(second);
      for (const seen of ['-1', '01', 'x', '1.5', '']) expect((await subscribe(seen)).status, `seen ${JSON.stringify(seen)}`).toBe(400);
    } finally {
      for (const socket of opened) socket.close(1000, 'done');
    }
  });

  it('answers a subscription with two tags with their revocations summed, and refuses a reconnection after either’s', async () => {
    const object = shardsOf()(0);
    const [principal, grant] = [newTag(), newTag()];
    const subscribe = (seen?: string) =>
      object.fetch(
        new Request(`https://bus.internal${BUS_ROUTES.subscribe}`, {
          headers: {
            Upgrade: 'websocket',
            [INTERNAL_HEADERS.listenTag]: `${principal} ${grant}`,
            ...(seen !== undefined && { [INTERNAL_HEADERS.listenRevocations]: seen }),
          },
        }),
      );
    const revoke = (tag: string) =>
      object.fetch(new Request(`https://bus.internal${BUS_ROUTES.revoke}`, { method: 'POST', body: JSON.stringify({ tag }) }));
    const opened: WebSocket[] = [];
    const accepted = async (seen?: string) => {
      const response = await subscribe(seen);
      expect(response.status).toBe(101);
      response.webSocket!.accept();
      opened.push(response.webSocket!);
      return response.headers.get(INTERNAL_HEADERS.listenRevocations);
    };
    try {
      expect(await accepted()).toBe('0');
      expect(await (await revoke(grant)).json(), 'found by its grant’s tag').toEqual(listens(1));
      expect((await subscribe('0')).status).toBe(403);
      const afterGrant = (await accepted())!;
      expect(Number(afterGrant), 'the grant’s mark').toBeGreaterThan(0);
      expect(await (await revoke(principal)).json(), 'found by its principal’s tag').toEqual(listens(1));
      expect((await subscribe(afterGrant)).status).toBe(403);
      const afterBoth = (await accepted())!;
      expect(Number(afterBoth), 'the two marks summed').toBeGreaterThan(Number(afterGrant));
      await revoke(newTag()); // another tag's revocation is not counted here
      expect(await accepted(afterBoth)).toBe(afterBoth);
    } finally {
      for (const socket of opened) socket.close(1000, 'done');
    }
  });

  it('keeps a revocation’s mark only as long as a stream can be away: older marks go at the next revocation, and a tag marked again is refused as before', async () => {
    const object = shardsOf()(0);
    const [old, fresh, other] = [newTag(), newTag(), newTag()];
    const revoke = (tag: string) =>
      object.fetch(new Request(`https://bus.internal${BUS_ROUTES.revoke}`, { method: 'POST', body: JSON.stringify({ tag }) }));
    const marks = () =>
      runInDurableObject(object, (_instance, state) => Object.fromEntries(state.storage.kv.list<number>({ prefix: 'revocations:' })));
    await revoke(fresh);
    // A mark older than MARK_KEPT_MS, as a revocation long ago left it.
    const stale = Date.now() - MARK_KEPT_MS - 1_000;
    await runInDurableObject(object, (_instance, state) => state.storage.kv.put(`revocations:${old}`, stale));
    expect(Object.keys(await marks()).sort()).toEqual([`revocations:${fresh}`, `revocations:${old}`].sort());
    await revoke(other);
    expect(Object.keys(await marks()).sort(), 'the old mark is gone, the recent ones kept').toEqual(
      [`revocations:${fresh}`, `revocations:${other}`].sort(),
    );
    // The old tag revoked again: its new mark is larger than the one deleted, so a sum seen with it still refuses.
    await revoke(old);
    expect((await marks())[`revocations:${old}`]).toBeGreaterThan(stale);
  });

  it.each([
    ['not JSON', 'tag'],
    ['null', 'null'],
    ['an array', '[]'],
    ['no tag', '{}'],
    ['a number for a tag', '{"tag":5}'],
    ['a tag of the wrong shape', JSON.stringify({ tag: 'A'.repeat(32) })],
  ])('refuses a revocation whose body is %s (400)', async (_name, body) => {
    const response = await shardsOf()(0).fetch(new Request(`https://bus.internal${BUS_ROUTES.revoke}`, { method: 'POST', body }));
    expect(response.status).toBe(400);
  });
});

describe('a listen stream served by the SDK under serveEndableListen', () => {
  it('subscribes under its tag, hears changes, and on revocation reads the error for its request, then ends', async () => {
    const shard = shardsOf();
    const bus = new DurableEventBus(shard, 1);
    const endpoint = createModernEndpoint(
      () => new McpServer({ name: 'revocation-test', version: '1.0.0' }, { capabilities: { tools: { listChanged: true } } }),
      {},
      // One stream at a time: a second is refused until the SDK has let go of the first.
      { maxBodyBytes: 1 << 20, heartbeatMs: 0, bus, maxListenStreams: 1 },
    );
    const tag = newTag();
    const id = 'listen-1';
    const response = await serveEndableListen([tag], id, () => endpoint.fetch(listenRequest(id)));
    expect(response.headers.get('Content-Type')).toBe('text/event-stream');
    const reader = new SseReader(response);
    try {
      const [ack] = await reader.take(1);
      expect(JSON.parse(ack!.data).method).toBe('notifications/subscriptions/acknowledged');
      // The SDK subscribed within the request's fetch: the scope's owner reached the bus.
      await until('the tagged socket is open', async () =>
        runInDurableObject(shard(0), (_instance, state) => state.getWebSockets(tag).length === 1),
      );
      bus.publish({ kind: 'tools_list_changed' });
      const [change] = await reader.take(1);
      expect(JSON.parse(change!.data).method).toBe('notifications/tools/list_changed');

      expect(await bus.revoke(tag)).toEqual(listens(1));
      const [end] = await reader.take(1);
      expect(end!.raw, 'the exact frame').toBe(revokedListenFrame(id));
      expect(JSON.parse(end!.data)).toEqual({
        jsonrpc: '2.0',
        id,
        error: {
          code: -32000,
          message: 'Listen ended: the grant of the principal that opened it was revoked',
          data: { reason: 'grant_revoked' },
        },
      });
      expect(await reader.next(1_000), 'then the stream ends').toBe(ENDED);
    } finally {
      await reader.cancel();
    }
    // The SDK let go of the stream (its body was cancelled): its one place is free again.
    const next = new SseReader(await serveEndableListen([newTag()], 'listen-2', () => endpoint.fetch(listenRequest('listen-2'))));
    try {
      const [ack] = await next.take(1);
      expect(JSON.parse(ack!.data).method).toBe('notifications/subscriptions/acknowledged');
    } finally {
      await next.cancel();
    }
  });
});

function listenRequest(id: string): Request {
  return new Request('http://localhost/mcp', {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      'MCP-Protocol-Version': MODERN,
      'Mcp-Method': 'subscriptions/listen',
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id,
      method: 'subscriptions/listen',
      params: {
        notifications: { toolsListChanged: true },
        _meta: {
          'io.modelcontextprotocol/protocolVersion': MODERN,
          'io.modelcontextprotocol/clientCapabilities': {},
          'io.modelcontextprotocol/clientInfo': { name: 'test', version: '1.0.0' },
        },
      },
    }),
  });
}

describe('a listen whose bus stays unreachable', () => {
  it('tells its owner once, after the retries, and opens nothing more', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout'] });
    try {
      let attempts = 0;
      const unreachable: BusObject = () => ({
        fetch: () => {
          attempts++;
          return Promise.reject(new Error('Network connection lost.'));
        },
      });
      const owner = ownerOf(newTag());
      listen(new DurableEventBus(unreachable), owner);
      await vi.advanceTimersByTimeAsync(60_000);
      expect(owner.unreachable).toHaveBeenCalledTimes(1);
      expect(owner.revoked).not.toHaveBeenCalled();
      const made = attempts;
      expect(made, 'the first attempt and every retry').toBeGreaterThan(1);
      await vi.advanceTimersByTimeAsync(60_000);
      expect(attempts).toBe(made);
    } finally {
      vi.useRealTimers();
    }
  });

  it('served at the edge with no registry (AUTH=none), ends with the error answer instead of going quiet', async () => {
    const unreachable: BusObject = () => ({ fetch: () => Promise.reject(new Error('Network connection lost.')) });
    const bus = new DurableEventBus(unreachable);
    const endpoint = createModernEndpoint(
      () => new McpServer({ name: 'unreachable-test', version: '1.0.0' }, { capabilities: { tools: { listChanged: true } } }),
      {},
      { maxBodyBytes: 1 << 20, heartbeatMs: 0, bus, maxListenStreams: 1 },
    );
    let reader: SseReader;
    vi.useFakeTimers({ toFake: ['setTimeout'] });
    try {
      const response = await serveModern(endpoint, undefined, {
        request: listenRequest('listen-9'),
        executionCtx: { waitUntil: () => undefined },
        config: readConfig({}),
        principal: ANONYMOUS,
        authInfo: undefined,
        holdings: undefined,
        bus,
        shares: new StreamShares(readConfig({})),
        holder: 'address:unknown',
        revocable: false,
        events: undefined,
        env: {},
        revokedToken: undefined,
        rateLimit: undefined,
      });
      reader = new SseReader(response);
      await vi.advanceTimersByTimeAsync(60_000);
    } finally {
      vi.useRealTimers();
    }
    try {
      const [ack, end] = await reader.take(2, 1_000);
      expect(JSON.parse(ack!.data).method).toBe('notifications/subscriptions/acknowledged');
      expect(end!.raw, 'the exact frame').toBe(unreachableListenFrame('listen-9'));
      expect(await reader.next(1_000), 'then the stream ends').toBe(ENDED);
    } finally {
      await reader.cancel();
    }
  });
});
