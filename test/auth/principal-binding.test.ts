/**
 * Every session and task belongs to the principal that made it. Another principal's request —
 * with the right session id, a valid cursor, a re-sent request id, a DELETE, a task id, a
 * listen — finds nothing, and is answered exactly as for an id that never existed. The same
 * principal with a refreshed token keeps its session, and its tools see the new token's scopes.
 */
import { runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { callTool, messages, openSession, type Session } from '../support/mcp-http.ts';
import { answerOf, modernRequest } from '../support/modern-http.ts';
import { SseReader, message } from '../support/sse-reader.ts';
import { createTask, TASK_CLIENT, taskMethod, waitForStatus } from '../support/task-http.ts';
import { bearer, TEST_ISSUER } from '../support/tokens.ts';
import { encodePrincipal } from '../../src/auth/principal.ts';
import { INTERNAL_HEADERS } from '../../src/core/wire.ts';

const UNKNOWN_SESSION = 'A'.repeat(43);
const UNKNOWN_TASK = 'AAAAAAAAAAAAAAAAAAAAAA';
const principalId = (subject: string) => `${TEST_ISSUER}#${subject}`;

/** What the `whoami` tool answered on an SSE reply: the principal id and scopes its call saw. */
async function whoami(reply: Response): Promise<unknown> {
  const reader = new SseReader(reply);
  try {
    const answer = (await reader.all())
      .filter((event) => event.data !== '')
      .map(message)
      .at(-1) as { result: { content: { text: string }[] } };
    return JSON.parse(answer.result.content[0]!.text);
  } finally {
    await reader.cancel();
  }
}

/** Status and body of an answer, with the JSON-RPC id (the request's own) set aside. */
async function shape(response: Response) {
  const text = await response.text();
  let body: unknown = text;
  try {
    body = { ...(JSON.parse(text) as object), id: 0 };
  } catch {
    // not JSON: compared as text
  }
  return { status: response.status, body };
}

describe("another principal's session", () => {
  it('answers every request exactly as an unknown session does, and stays whole for its owner', async () => {
    const alice = await bearer('alice');
    const mallory = await bearer('mallory');
    const session = await openSession('2025-11-25', {}, alice);
    const call = messages(await session.call('tools/call', { name: 'echo', arguments: { text: 'hi' } }, 7));
    expect(call.at(-1)).toMatchObject({ result: { content: [{ text: 'hi' }] } });

    const asUnknown = (headers: Record<string, string>) => ({ ...headers, 'Mcp-Session-Id': UNKNOWN_SESSION });
    const pairs: [string, (headers: Record<string, string>) => Promise<Response>][] = [
      ['a POST', (headers) => session.post({ jsonrpc: '2.0', id: 8, method: 'ping' }, headers)],
      ['a re-sent request id', (headers) => session.post(callTool(7, 'echo', { text: 'again' }), headers)],
      ['a GET with a valid cursor', (headers) => session.get(session.eventId(2, 1), headers)],
      ['a GET without one', (headers) => session.get(undefined, headers)],
      ['a DELETE', (headers) => session.delete(headers)],
    ];
    for (const [name, send] of pairs) {
      const foreign = await shape(await send(mallory));
      const unknown = await shape(await send(asUnknown(mallory)));
      expect(foreign, name).toEqual(unknown);
      expect(foreign.status, name).toBe(404);
    }
    // Nothing Mallory sent reached the session: it answers Alice as before.
    expect(messages(await session.call('tools/call', { name: 'echo', arguments: { text: 'still' } })).at(-1)).toMatchObject({
      result: { content: [{ text: 'still' }] },
    });
  });

  it('is kept across a refreshed token of the same principal, whose scopes its tools then see', async () => {
    const session = await openSession('2025-11-25', {}, await bearer('alice', { scopes: ['mcp'] }));
    const refreshed = await bearer('alice', { scopes: ['mcp', 'reports:read'] });
    const reply = await session.post(callTool(3, 'whoami', {}), refreshed);
    expect(await whoami(reply)).toEqual({ id: principalId('alice'), scopes: ['mcp', 'reports:read'] });
  });
});

describe('a client with the name of a user', () => {
  // A client-credentials token names no user (no `sub`): it stands for its client, whose id is
  // of another kind than any user's, even where the two names are the same string.
  const client = (clientId: string) => bearer(null, { claims: { client_id: clientId } });

  const pairs: [string, (session: Session, headers: Record<string, string>) => Promise<Response>][] = [
    ['a POST', (session, headers) => session.post({ jsonrpc: '2.0', id: 8, method: 'ping' }, headers)],
    ['a GET with a valid cursor', (session, headers) => session.get(session.eventId(2, 1), headers)],
    ['a GET without one', (session, headers) => session.get(undefined, headers)],
    ['a DELETE', (session, headers) => session.delete(headers)],
  ];
  async function expectUnknownTo(session: Session, other: Record<string, string>) {
    for (const [name, send] of pairs) {
      const foreign = await shape(await send(session, other));
      const unknown = await shape(await send(session, { ...other, 'Mcp-Session-Id': UNKNOWN_SESSION }));
      expect(foreign, name).toEqual(unknown);
      expect(foreign.status, name).toBe(404);
    }
  }

  it("does not reach the user's session: it is answered as an unknown session", async () => {
    const session = await openSession('2025-11-25', {}, await bearer('alice'));
    await session.call('tools/call', { name: 'echo', arguments: { text: 'first' } }); // stream 2: a real cursor to try
    await expectUnknownTo(session, await client('alice'));
    expect(messages(await session.call('tools/call', { name: 'echo', arguments: { text: 'mine' } })).at(-1)).toMatchObject({
      result: { content: [{ text: 'mine' }] },
    });
  });

  it("is not reached by the user: the client's session is unknown to it", async () => {
    const session = await openSession('2025-11-25', {}, await client('alice'));
    await session.call('tools/call', { name: 'echo', arguments: { text: 'first' } });
    await expectUnknownTo(session, await bearer('alice'));
  });

  it('is a principal of its own kind, which its tools see', async () => {
    const session = await openSession('2025-11-25', {}, await client('alice'));
    expect(await whoami(await session.post(callTool(3, 'whoami', {})))).toEqual({ id: `${TEST_ISSUER}!client#alice`, scopes: ['mcp'] });
  });

  it("cannot use the user's MRTR requestState", async () => {
    const name = 'test_input_required_result_request_state';
    const capabilities = { elicitation: { form: {} } };
    const first = await answerOf(await modernRequest('tools/call', { name, arguments: {} }, capabilities, await bearer('alice')));
    const retry = {
      name,
      arguments: {},
      inputResponses: { confirm: { action: 'accept', content: { ok: true } } },
      requestState: first.result.requestState,
    };
    expect((await answerOf(await modernRequest('tools/call', retry, capabilities, await client('alice')))).error?.code).toBe(-32602);
  });
});

describe('a forged principal header', () => {
  it("never stands for another principal: the Worker's own takes its place", async () => {
    const alice = await bearer('alice');
    const forged = encodePrincipal({ id: principalId('mallory'), subject: 'mallory', clientId: null, scopes: ['admin'], claims: {} });
    const session = await openSession('2025-11-25', {}, alice);
    const reply = await session.post(callTool(3, 'whoami', {}), { ...alice, [INTERNAL_HEADERS.principal]: forged });
    expect(await whoami(reply)).toEqual({ id: principalId('alice'), scopes: ['mcp'] });
  });
});

describe("another principal's task", () => {
  it('answers every task method exactly as an unknown task does, and its object holds nothing', async () => {
    const alice = await bearer('alice');
    const mallory = await bearer('mallory');
    const taskId = await createTask('slow_compute', { seconds: 0, label: 'mine' }, alice);
    await waitForStatus(taskId, 'completed', 5000, alice);
    for (const method of ['tasks/get', 'tasks/update', 'tasks/cancel'] as const) {
      const foreign = await answerOf(await taskMethod(method, taskId, {}, mallory));
      const none = await answerOf(await taskMethod(method, UNKNOWN_TASK, {}, mallory));
      expect({ ...foreign, id: 0 }).toEqual({ ...none, id: 0 });
      expect(foreign.error.code).toBe(-32602);
    }
    const object = env.MCP_TASKS.get(env.MCP_TASKS.idFromName(JSON.stringify([principalId('mallory'), taskId])));
    const tables = await runInDurableObject(
      object,
      (_instance, state) =>
        state.storage.sql
          .exec<{ n: number }>(`SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '\\_%' ESCAPE '\\'`)
          .one().n,
    );
    expect(tables).toBe(0);
    expect((await answerOf(await taskMethod('tasks/get', taskId, {}, alice))).result.status).toBe('completed');
  });

  it('answers tasks/stream exactly as tasks/get answers an unknown task, with or without a cursor: none of its events reach another principal', async () => {
    const alice = await bearer('alice');
    const mallory = await bearer('mallory');
    const taskId = await createTask('chatter', { steps: 2, interval_ms: 0 }, alice);
    await waitForStatus(taskId, 'completed', 5000, alice);
    const unknown = await shape(await taskMethod('tasks/get', UNKNOWN_TASK, {}, mallory));
    for (const after of [undefined, 0, 3]) {
      const params = after === undefined ? { taskId } : { taskId, after };
      const foreign = await modernRequest('tasks/stream', params, TASK_CLIENT, mallory);
      // "A client that cannot access a task MUST NOT be allowed to stream its events."
      expect(await shape(foreign)).toEqual(unknown);
    }
    expect(unknown.body).toMatchObject({ error: { code: -32602 } });
    // Its owner streams it whole.
    const reader = new SseReader(await modernRequest('tasks/stream', { taskId }, TASK_CLIENT, alice));
    try {
      const events = (await reader.all()).map(message).filter((m) => m.method === 'notifications/tasks/event');
      expect(events).toHaveLength(8);
    } finally {
      await reader.cancel();
    }
  });

  it('is not acknowledged on a listen, as an unknown one is not, and the stream ends at once', async () => {
    const alice = await bearer('alice');
    const mine = await createTask('slow_compute', { seconds: 5, label: 'private' }, alice);
    const listen = await modernRequest(
      'subscriptions/listen',
      { notifications: { taskIds: [mine, UNKNOWN_TASK] } },
      TASK_CLIENT,
      await bearer('mallory'),
    );
    const reader = new SseReader(listen);
    try {
      const events = (await reader.all(5000)).map(message);
      expect(events[0]).toMatchObject({ method: 'notifications/subscriptions/acknowledged', params: { notifications: { taskIds: [] } } });
      expect(events).toHaveLength(2);
    } finally {
      await reader.cancel();
      await taskMethod('tasks/cancel', mine, {}, alice);
    }
  });
});

describe('a 2026-07-28 MRTR round', () => {
  it("refuses state minted for another principal's call", async () => {
    const name = 'test_input_required_result_request_state';
    const capabilities = { elicitation: { form: {} } };
    const first = await answerOf(await modernRequest('tools/call', { name, arguments: {} }, capabilities, await bearer('alice')));
    const requestState = first.result.requestState as string;
    expect(typeof requestState).toBe('string');
    const retry = { name, arguments: {}, inputResponses: { confirm: { action: 'accept', content: { ok: true } } }, requestState };
    const stolen = await answerOf(await modernRequest('tools/call', retry, capabilities, await bearer('mallory')));
    expect(stolen.error?.code).toBe(-32602);
    const own = await answerOf(await modernRequest('tools/call', retry, capabilities, await bearer('alice')));
    expect(own.result).toBeDefined();
    expect(own.error).toBeUndefined();
  });
});

describe('2026-07-28 results', () => {
  it('are marked private to the principal that asked (cacheScope), never shared', async () => {
    for (const method of ['tools/list', 'server/discover']) {
      const answer = await answerOf(await modernRequest(method, {}, {}, await bearer('alice')));
      expect(answer.result?.cacheScope, method).toBe('private');
    }
  });
});
