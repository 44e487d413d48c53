/**
 * The witness: a session opened before the fuzz, checked after it (invariant 4 in
 * fuzz-world.ts). It must still answer ping and an echo, and replay the stream it made before
 * the fuzz identically.
 */
import { readAnswer } from './fuzz-answers.ts';
import type { Fetcher } from './fuzz-types.ts';

const CLIENT_HEADERS = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };

export interface Witness {
  readonly id: string;
  readonly version: string;
  /** The session's epoch, as its initialize answer gave it. */
  readonly epoch: string | undefined;
  /** The stream of the echo made before the fuzz: its first id (the priming event) and every event after. */
  readonly cursor: string;
  readonly events: readonly { id: string; data: string }[];
}

function sseEvents(text: string): { id: string; data: string }[] {
  return text
    .split(/\n\n/)
    .filter((frame) => /^id: /m.test(frame))
    .map((frame) => ({
      id: /^id: ?(.*)$/m.exec(frame)![1]!,
      data: [...frame.matchAll(/^data: ?(.*)$/gm)].map((m) => m[1]).join('\n'),
    }));
}

async function post(fetcher: Fetcher, origin: string, body: unknown, headers: Record<string, string> = {}) {
  const response = await fetcher(
    new Request(`${origin}/mcp`, { method: 'POST', headers: { ...CLIENT_HEADERS, ...headers }, body: JSON.stringify(body) }),
  );
  const answer = await readAnswer(response, 5_000, 10_000);
  return { response, text: answer.text, complete: answer.complete };
}

/** Opens a 2025-11-25 session and makes one echo call, whose stream is replayed after the fuzz. */
export async function openWitness(fetcher: Fetcher, origin: string, version = '2025-11-25'): Promise<Witness> {
  const init = await post(fetcher, origin, {
    jsonrpc: '2.0',
    id: `witness-init-${crypto.randomUUID()}`,
    method: 'initialize',
    params: { protocolVersion: version, capabilities: {}, clientInfo: { name: 'witness', version: '1.0.0' } },
  });
  const id = init.response.headers.get('Mcp-Session-Id');
  if (init.response.status !== 200 || id === null) throw new Error(`witness: initialize answered ${init.response.status} ${init.text}`);
  const headers = { 'Mcp-Session-Id': id, 'MCP-Protocol-Version': version };
  const initialized = await post(fetcher, origin, { jsonrpc: '2.0', method: 'notifications/initialized' }, headers);
  if (initialized.response.status !== 202) throw new Error(`witness: notifications/initialized answered ${initialized.response.status}`);
  const call = await post(fetcher, origin, echoCall('before the fuzz'), headers);
  const { cursor, events } = finishedStream(call.text);
  if (call.response.status !== 200 || !call.complete || events.length === 0)
    throw new Error(`witness: echo answered ${call.response.status} ${call.text}`);
  return { id, version, epoch: init.response.headers.get('Mcp-Session-Epoch') ?? undefined, cursor, events };
}

/**
 * A finished stream as the witness keeps it: the cursor at its start (`E-S-0`, the priming
 * event's id on 2025-11-25, where older revisions have none) and its events.
 */
function finishedStream(text: string): { cursor: string; events: { id: string; data: string }[] } {
  const events = sseEvents(text).filter((e) => e.data !== '');
  const cursor = events.length === 0 ? '' : events[0]!.id.replace(/-\d+$/, '-0');
  return { cursor, events };
}

const echoCall = (text: string) => ({
  jsonrpc: '2.0',
  id: `witness-${crypto.randomUUID()}`,
  method: 'tools/call',
  params: { name: 'echo', arguments: { text } },
});

/**
 * What is wrong with the witness now (an empty list if it still works as it did), and the
 * witness to check next time: the same session, with the echo just made as its stream (a
 * check never depends on how long the run has been).
 */
export async function checkWitness(fetcher: Fetcher, origin: string, witness: Witness): Promise<{ problems: string[]; next: Witness }> {
  const problems: string[] = [];
  const headers = { 'Mcp-Session-Id': witness.id, 'MCP-Protocol-Version': witness.version };
  const ping = await post(fetcher, origin, { jsonrpc: '2.0', id: `witness-${crypto.randomUUID()}`, method: 'ping' }, headers);
  const pong = sseEvents(ping.text).find((e) => e.data !== '');
  if (ping.response.status !== 200 || pong === undefined || JSON.stringify(JSON.parse(pong.data).result) !== '{}') {
    problems.push(`ping answered ${ping.response.status} ${ping.text.slice(0, 300)}`);
  }
  const text = `after the fuzz ${crypto.randomUUID()}`;
  const call = await post(fetcher, origin, echoCall(text), headers);
  const events = sseEvents(call.text);
  const result = events.find((e) => e.data !== '');
  if (call.response.status !== 200 || result === undefined || JSON.parse(result.data).result?.content?.[0]?.text !== text) {
    problems.push(`echo answered ${call.response.status} ${call.text.slice(0, 300)}`);
  }
  // The stream made before the fuzz replays the same events, under the same ids, and ends.
  const resumed = await fetcher(
    new Request(`${origin}/mcp`, { method: 'GET', headers: { Accept: 'text/event-stream', ...headers, 'Last-Event-ID': witness.cursor } }),
  );
  const replay = await readAnswer(resumed, 5_000, 10_000);
  const replayed = sseEvents(replay.text).filter((e) => e.data !== '');
  if (
    resumed.status !== 200 ||
    resumed.headers.get('Mcp-Stream-Resumed') !== 'true' ||
    !replay.complete ||
    JSON.stringify(replayed) !== JSON.stringify(witness.events)
  ) {
    problems.push(
      `resume from ${witness.cursor} answered ${resumed.status} (resumed ${resumed.headers.get('Mcp-Stream-Resumed')}, complete ${replay.complete}): ${replay.text.slice(0, 300)}; expected ${JSON.stringify(witness.events).slice(0, 300)}`,
    );
  }
  const fresh = finishedStream(call.text);
  const next = fresh.events.length > 0 ? { ...witness, ...fresh } : witness;
  return { problems, next };
}
