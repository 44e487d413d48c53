/**
 * The library under DO_JURISDICTION = "eu" and DO_LOCATION_HINT = "weur" (the placement
 * project, AUTH=jwt so that principals have registries), end to end through the fixture's
 * Worker: a session, a task, an event emitted by a tool and polled, a listen heard through the
 * bus, a webhook subscription delivered (its object reaching the log, the log poking it), and
 * the operator's routes. A local workerd has no jurisdictions, so one is stood in
 * (test/support/jurisdiction-stand-in.ts) on the runtime's namespace prototype: every call the
 * Worker, an object or a tool makes on a library binding is recorded, in the jurisdiction or
 * not. Each flow works, reaches the objects it must, every one in `eu` and got with `weur`, and
 * not one call is made on an unrestricted namespace.
 */
import { env } from 'cloudflare:workers';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { placedNamespace } from '../../src/lib.ts';
import { busShardName, busShardSockets } from '../../src/stateless/event-bus.ts';
import { eventsRequest, polled, postNote, token } from '../support/events-http.ts';
import { installJurisdictionStandIn } from '../support/jurisdiction-stand-in.ts';
import { callTool, messages, openSession } from '../support/mcp-http.ts';
import { answerOf, modernRequest } from '../support/modern-http.ts';
import { admin, newPrincipal } from '../support/principals.ts';
import { message, SseReader } from '../support/sse-reader.ts';
import { createTask, waitForStatus } from '../support/task-http.ts';
import { endpoint, newSecret, until } from '../webhooks/receiver.ts';

const LIBRARY_BINDINGS = ['MCP_SESSION', 'MCP_BUS', 'MCP_TASKS', 'MCP_PRINCIPALS', 'MCP_EVENTS', 'MCP_WEBHOOKS'] as const;
type Binding = (typeof LIBRARY_BINDINGS)[number];

// Before the Worker's first request: its configuration check restricts every binding once.
const standIn = installJurisdictionStandIn(LIBRARY_BINDINGS);
afterAll(() => standIn.uninstall());
beforeEach(() => standIn.clear());

/** What the flow reached: none of it outside `eu`, all of it in `eu`, every stub got with `weur`. */
function expectPlaced(reached: readonly Binding[]): void {
  expect(standIn.unplaced, 'calls on an unrestricted namespace').toEqual([]);
  expect(new Set(standIn.placed.map(({ binding }) => binding))).toEqual(new Set(reached));
  expect(new Set(standIn.placed.map(({ jurisdiction }) => jurisdiction))).toEqual(new Set(['eu']));
  const gets = standIn.placed.filter(({ method }) => method === 'get');
  expect(new Set(gets.map(({ binding }) => binding)), 'a stub got for each binding reached').toEqual(new Set(reached));
  expect(new Set(gets.map(({ locationHint }) => locationHint))).toEqual(new Set(['weur']));
}

it('the project runs under the placement it says (the stand-in is what stands between it and an unrestricted namespace)', () => {
  expect(env).toMatchObject({ DO_JURISDICTION: 'eu', DO_LOCATION_HINT: 'weur' });
});

describe('DO_JURISDICTION = "eu", DO_LOCATION_HINT = "weur"', () => {
  it('a session: admitted by its principal’s registry, served by its object, let go at DELETE', async () => {
    const { auth } = await newPrincipal('eu-session');
    const session = await openSession('2025-11-25', {}, auth);
    const echoed = messages(await session.call('tools/call', { name: 'echo', arguments: { text: 'in the eu' } }));
    expect(JSON.stringify(echoed)).toContain('in the eu');
    expect((await session.delete()).status).toBe(204);
    const after = await session.post(callTool('after', 'echo', { text: 'gone' }));
    expect(after.status).toBe(404);
    expectPlaced(['MCP_PRINCIPALS', 'MCP_SESSION']);
  });

  it('a task: admitted, created, run to its result', async () => {
    const { auth } = await newPrincipal('eu-task');
    const taskId = await createTask('slow_compute', { seconds: 0, label: 'eu' }, auth);
    const done = await waitForStatus(taskId, 'completed', 10_000, auth);
    expect(JSON.stringify(done)).toContain('Computed eu in 0 s');
    expectPlaced(['MCP_PRINCIPALS', 'MCP_TASKS']);
  });

  it('an event: emitted by a tool into its log (the namespace it holds is the Worker’s env’s), then polled from it', async () => {
    const { auth } = await newPrincipal('eu-events');
    const mark = token();
    const { cursor } = await polled({ name: 'demo.note', arguments: { contains: mark }, cursor: null }, auth);
    const emitted = await postNote(`note ${mark}`, undefined, auth);
    const result = await polled({ name: 'demo.note', arguments: { contains: mark }, cursor }, auth);
    expect(result.events.map(({ eventId, data }) => ({ eventId, text: data.text }))).toEqual([
      { eventId: emitted.eventId, text: `note ${mark}` },
    ]);
    expectPlaced(['MCP_PRINCIPALS', 'MCP_EVENTS']);
  });

  it('a listen: its socket held by a bus shard, a change published to the shards, heard', async () => {
    const { auth } = await newPrincipal('eu-listen');
    const reader = new SseReader(await modernRequest('subscriptions/listen', { notifications: { toolsListChanged: true } }, {}, auth));
    try {
      const [ack] = await reader.take(1);
      expect(message(ack!).method).toBe('notifications/subscriptions/acknowledged');
      // The socket's shard, reached as a Worker's own code reaches it: placedNamespace.
      const bus = placedNamespace(env.MCP_BUS);
      await until(async () => (await busShardSockets((index) => bus.get(bus.idFromName(busShardName(index))), 1))[0]! >= 1);
      await answerOf(await modernRequest('tools/call', { name: 'test_trigger_tool_change', arguments: {} }, {}, auth));
      const [change] = await reader.take(1);
      expect(message(change!).method).toBe('notifications/tools/list_changed');
    } finally {
      await reader.cancel();
    }
    expectPlaced(['MCP_PRINCIPALS', 'MCP_BUS']);
  });

  it('a webhook subscription: admitted, joined to its log by its object, poked by the log, delivered', async () => {
    const { auth } = await newPrincipal('eu-webhook');
    const hook = endpoint('eu');
    const mark = token();
    const subscribed = await answerOf(
      await eventsRequest(
        'events/subscribe',
        { name: 'demo.note', arguments: { contains: mark }, delivery: { mode: 'webhook', url: hook.url, secret: newSecret() } },
        auth,
      ),
    );
    expect(subscribed.error).toBeUndefined();
    await postNote(`hooked ${mark}`, undefined, auth);
    await until(async () => (await hook.log()).some(({ body }) => JSON.parse(body).data?.text === `hooked ${mark}`));
    expectPlaced(['MCP_PRINCIPALS', 'MCP_WEBHOOKS', 'MCP_EVENTS']);
  });

  it('the operator’s routes: what a principal holds, listed and revoked, reached in the jurisdiction', async () => {
    const { id, auth } = await newPrincipal('eu-operator');
    await openSession('2025-11-25', {}, auth);
    await createTask('slow_compute', { seconds: 0, label: 'held' }, auth);
    const hook = endpoint('eu-operator');
    const subscribe = { name: 'demo.note', arguments: {}, delivery: { mode: 'webhook', url: hook.url, secret: newSecret() } };
    expect((await answerOf(await eventsRequest('events/subscribe', subscribe, auth))).error).toBeUndefined();
    standIn.clear();

    const listed = await admin('GET', id);
    expect(listed.status, await listed.clone().text()).toBe(200);
    const held = (await listed.json()) as { sessions: unknown[]; tasks: unknown[]; webhooks: unknown[] };
    expect([held.sessions.length, held.tasks.length, held.webhooks.length]).toEqual([1, 1, 1]);
    const revoked = await admin('POST', id, '/revoke');
    expect(revoked.status, await revoked.clone().text()).toBe(200);
    expect(await revoked.json()).toMatchObject({ sessions: 1, webhooks: 1 });
    expectPlaced(['MCP_PRINCIPALS', 'MCP_SESSION', 'MCP_TASKS', 'MCP_BUS', 'MCP_WEBHOOKS']);
  });
});
