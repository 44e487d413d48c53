/**
 * A deploy that removes a subscription's event type (SEP-3415, *Event type removal*: "The server
 * SHOULD end them with each mode's termination signal"; "Purely additive changes MUST NOT
 * terminate subscriptions"). A deploy constructs the subscription's object with the new `types`;
 * here the live instance's `types` are replaced inside `runInDurableObject` (the fixture's list is
 * fixed), and the object is woken as the deploy's would be: a poke from its log, or its alarm
 * (webhook-object.ts, webhook-type-removal.ts). The subscription's endpoint hears exactly one
 * `terminated`, then the subscription is gone from its object and from its log.
 */
import { runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { WEBHOOK_ID_HEADER } from '../../src/core/events-webhook-wire.ts';
import { eventsError } from '../../src/core/events-wire.ts';
import { logObjectName } from '../../src/events/event-logs.ts';
import type { EventType } from '../../src/events/event-type.ts';
import { defineEventType } from '../../src/lib.ts';
import {
  detachFromLog,
  type Made,
  note,
  NOTE_LOG,
  objectOf,
  pokeToHead,
  received,
  receivedUntil,
  SECRET_A,
  subscribe,
  until,
  verifiesUnder,
  bodyOf,
} from '../support/webhook-subscription.ts';

/** What the deploy serves instead: the live instance's `types`, as a new deploy would construct it. */
async function deploy(made: Made, change: (types: readonly EventType[]) => readonly EventType[]): Promise<void> {
  await runInDurableObject(objectOf(made.id), (instance) => {
    const object = instance as unknown as { types: readonly EventType[] };
    object.types = change(object.types);
  });
}

const without = (name: string) => (types: readonly EventType[]) => types.filter((type) => type.name !== name);
const replacing = (replacement: EventType) => (types: readonly EventType[]) =>
  types.map((type) => (type.name === replacement.name ? replacement : type));

/** demo.note as it is, but no longer offered by webhook. */
const noteWithoutWebhook = defineEventType({
  name: 'demo.note',
  inputSchema: z.object({ contains: z.string().optional() }),
  payloadSchema: z.object({ text: z.string(), n: z.number().int() }),
  delivery: ['poll', 'push'],
  matches: ({ contains }, { text }) => contains === undefined || text.includes(contains),
});

/** demo.note changed additively: an optional argument and an optional payload field more, a new description. */
const noteExtended = defineEventType({
  name: 'demo.note',
  description: 'A note, now with an optional author',
  inputSchema: z.object({ contains: z.string().optional(), author: z.string().optional() }),
  payloadSchema: z.object({ text: z.string(), n: z.number().int(), author: z.string().optional() }),
  delivery: ['poll', 'push', 'webhook'],
  matches: ({ contains }, { text }) => contains === undefined || text.includes(contains),
});

const REMOVED = eventsError('NotFound', 'this event type is no longer served', { kind: 'event' });
const WITHDRAWN = eventsError('Unsupported', 'demo.note is no longer delivered by webhook', { feature: 'deliveryMode', value: 'webhook' });

/** The subscriber rows of demo.note's log that name `id`. */
const logRowsOf = (id: string) =>
  runInDurableObject(env.MCP_EVENTS.get(env.MCP_EVENTS.idFromName(logObjectName(NOTE_LOG))), (_instance, state) =>
    state.storage.sql.exec<{ id: string }>('SELECT id FROM webhook_subscriber WHERE id = ?', id).toArray(),
  );

/** The end of a subscription whose type was withdrawn: one `terminated` with `error`, signed, then nothing of it anywhere. */
async function expectEndedWith(made: Made, error: unknown): Promise<void> {
  await until(async () => (await made.stub.describe()) === null, 'ended');
  const log = await received(made.endpoint);
  // Exactly one POST: the envelope; no event was POSTed, before it or after (the record is gone: nothing can be).
  expect(log.map(bodyOf)).toEqual([{ type: 'terminated', error }]);
  expect(log[0]!.headers[WEBHOOK_ID_HEADER]).toMatch(/^msg_terminated_[0-9a-f]{32}$/);
  expect(await verifiesUnder(log[0]!, SECRET_A)).toBe(true);
  expect(await made.stub.probe()).toBeNull();
  expect(await pokeToHead(made.stub)).toBe('gone');
  expect(await logRowsOf(made.id)).toEqual([]);
}

describe('"The server SHOULD end them with each mode\'s termination signal": a removed type', () => {
  it('woken by its log (a note appended after the deploy): `terminated` NotFound {kind: "event"}, the note not delivered, then gone', async () => {
    const made = await subscribe();
    expect(await logRowsOf(made.id)).toEqual([{ id: made.id }]);
    await deploy(made, without('demo.note'));
    await note(`${made.tok} after the deploy`);
    // The log's own poke, or this one, finds the type gone: either way the subscription is no longer live.
    expect(await pokeToHead(made.stub)).toBe('gone');
    await expectEndedWith(made, REMOVED);
  });

  it('woken by its alarm alone (detached from its log: no poke): the same `terminated`, then gone', async () => {
    const made = await subscribe();
    await detachFromLog(made.id);
    await deploy(made, without('demo.note'));
    expect(await runDurableObjectAlarm(objectOf(made.id))).toBe(true);
    await receivedUntil(made.endpoint, (log) => log.some((r) => r.answered === 200), 'the terminated envelope');
    await expectEndedWith(made, REMOVED);
  });

  it('still listed but no longer offered by webhook: `terminated` Unsupported {feature: "deliveryMode", value: "webhook"} (what a new events/subscribe is refused with), then gone', async () => {
    const made = await subscribe();
    await deploy(made, replacing(noteWithoutWebhook));
    await note(`${made.tok} after the deploy`);
    expect(await pokeToHead(made.stub)).toBe('gone');
    await expectEndedWith(made, WITHDRAWN);
  });
});

describe('"Purely additive changes MUST NOT terminate subscriptions"', () => {
  it('demo.note with an optional argument and payload field more: the next note is delivered, the subscription stays active', async () => {
    const made = await subscribe();
    await deploy(made, replacing(noteExtended));
    const { eventId } = await note(`${made.tok} after the additive deploy`);
    expect(await pokeToHead(made.stub)).toBe('processed');
    const log = await receivedUntil(made.endpoint, (l) => l.some((r) => r.headers[WEBHOOK_ID_HEADER] === eventId), 'the delivery');
    expect(log.every((r) => bodyOf(r).type === undefined)).toBe(true);
    expect((await made.stub.describe())?.state).toBe('active');
  });
});
