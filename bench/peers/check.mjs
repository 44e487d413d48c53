/**
 * Smoke check of the peers over raw HTTP on 127.0.0.1: initialize, notifications/initialized,
 * tools/call echo, tools/call progress {n: 5} with a progressToken (5 progress + the result),
 * and for the resumable peers a GET + Last-Event-ID from the 2nd progress event. A peer that
 * serves only the E workloads (`events-floor`) is checked on their wire instead (checkEvents),
 * one that serves only the M workloads (`modern-floor`) on 2026-07-28's (checkModern).
 *
 *   node bench/peers/check.mjs [--port 18801] [peer ...]     (default: all peers, one at a time)
 *
 * Exits non-zero if any check fails. Every peer it starts is stopped.
 */
import { join } from 'node:path';
import { memoryRss, PEERS, RESUMABLE_PEERS, ROOT, SESSIONLESS_PEERS, startPeer, takesWorkload } from './index.mjs';

const argv = process.argv.slice(2);
let basePort = 18801;
const names = [];
for (let i = 0; i < argv.length; i++) {
  if (argv[i] === '--port') basePort = Number(argv[++i]);
  else names.push(argv[i]);
}
const selected = names.length > 0 ? names : [...PEERS];

const PROTOCOL = '2025-11-25';
const TIMEOUT_MS = 30_000;

/** Reads SSE events until `done(events)` or the end of the body or the timeout, then cancels. */
async function readEvents(response, done = () => false) {
  const events = [];
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  const deadline = Date.now() + TIMEOUT_MS;
  try {
    while (Date.now() < deadline) {
      const timer = new Promise((r) => setTimeout(() => r({ timeout: true }), Math.max(0, deadline - Date.now())));
      const next = await Promise.race([reader.read(), timer]);
      if (next.timeout || next.done) break;
      buffer += next.value.replace(/\r\n?/g, '\n');
      let cut;
      while ((cut = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        const event = { id: undefined, data: [] };
        for (const line of block.split('\n')) {
          if (line.startsWith(':')) continue;
          const colon = line.indexOf(':');
          const field = colon < 0 ? line : line.slice(0, colon);
          const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
          if (field === 'id') event.id = value;
          if (field === 'data') event.data.push(value);
        }
        const data = event.data.join('\n');
        // A priming event (empty data) is kept as { id, message: undefined }.
        if (data !== '' || event.id !== undefined) events.push({ id: event.id, message: data === '' ? undefined : JSON.parse(data) });
      }
      if (done(events)) {
        // Read on to the end of the body for a moment, so a finished response is not cut.
        const grace = Math.min(deadline, Date.now() + 500);
        while (Date.now() < grace) {
          const more = await Promise.race([reader.read(), new Promise((r) => setTimeout(() => r({ timeout: true }), grace - Date.now()))]);
          if (more.timeout || more.done) break;
        }
        break;
      }
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
  return events;
}

async function post(url, body, sessionId) {
  const headers = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
  if (sessionId !== undefined) {
    headers['Mcp-Session-Id'] = sessionId;
    headers['MCP-Protocol-Version'] = PROTOCOL;
  }
  return fetch(url, { method: 'POST', headers, body: JSON.stringify(body), signal: AbortSignal.timeout(TIMEOUT_MS) });
}

async function bodyOf(response) {
  const type = response.headers.get('content-type') ?? '';
  if (type.includes('text/event-stream'))
    return readEvents(response, (events) => events.some((e) => e.message && ('result' in e.message || 'error' in e.message)));
  const text = await response.text();
  return text === '' ? [] : [{ id: undefined, message: JSON.parse(text) }];
}

const short = (events) =>
  events.map((e) => `${e.id ?? '-'} ${e.message === undefined ? '(priming event)' : JSON.stringify(e.message)}`).join('\n      ');
const find = (events, id) => events.find((e) => e.message?.id === id)?.message;

async function checkPeer(name, port) {
  const lines = [];
  const failures = [];
  const expect = (ok, what) => {
    if (!ok) failures.push(what);
  };
  const started = Date.now();
  // Its own state dir, so a check never clears the dir of a peer the harness is running.
  const peer = await startPeer(name, port, { stateDir: join(ROOT, '.cache/bench-state/check', name) });
  const mib = (bytes) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;
  lines.push(
    `started in ${Date.now() - started} ms: ${peer.url} (group ${peer.pid}; serving ${peer.servingPids().join(',')} ` +
      `RSS ${mib(await memoryRss(peer))}; proxy ${peer.proxyPids().join(',') || '-'}, with proxy ${mib(await memoryRss(peer, { includeProxy: true }))})`,
  );
  try {
    if (!takesWorkload(name, 'W1')) {
      await (takesWorkload(name, 'M1') ? checkModern : checkEvents)(peer.url, lines, expect);
      return { lines, failures };
    }
    // initialize
    let response = await post(peer.url, {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: PROTOCOL, capabilities: {}, clientInfo: { name: 'bench-check', version: '0' } },
    });
    const sessionId = response.headers.get('mcp-session-id') ?? undefined;
    let events = await bodyOf(response);
    const init = find(events, 1)?.result;
    lines.push(
      `initialize: ${response.status} ${response.headers.get('content-type')} session=${sessionId} protocol=${init?.protocolVersion} server=${init?.serverInfo?.name}`,
    );
    // A session's id, or none from a peer that serves 2025 requests without sessions.
    const sessionless = SESSIONLESS_PEERS.includes(name);
    expect(response.status === 200 && (sessionId === undefined) === sessionless && init !== undefined, 'initialize');

    // notifications/initialized
    response = await post(peer.url, { jsonrpc: '2.0', method: 'notifications/initialized' }, sessionId);
    await response.body?.cancel();
    lines.push(`notifications/initialized: ${response.status}`);
    expect(response.status === 202, 'notifications/initialized');

    // echo
    response = await post(
      peer.url,
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'echo', arguments: { text: 'hello bench' } } },
      sessionId,
    );
    events = await bodyOf(response);
    const echo = find(events, 2);
    lines.push(`tools/call echo: ${response.status}\n      ${short(events)}`);
    expect(echo?.result?.content?.[0]?.text === 'hello bench', 'echo');

    // progress n = 5
    response = await post(
      peer.url,
      { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'progress', arguments: { n: 5 }, _meta: { progressToken: 'p-5' } } },
      sessionId,
    );
    events = await bodyOf(response);
    const progress = events.filter((e) => e.message?.method === 'notifications/progress');
    const result = find(events, 3);
    lines.push(`tools/call progress {n: 5}: ${response.status}\n      ${short(events)}`);
    expect(
      progress.length === 5 &&
        progress.every(
          (e, i) => e.message.params.progressToken === 'p-5' && e.message.params.progress === i + 1 && e.message.params.total === 5,
        ) &&
        result?.result?.content?.[0]?.text === 'done 5',
      'progress: 5 notifications 1..5 of 5, then "done 5"',
    );

    // resume from the 2nd progress event
    if (RESUMABLE_PEERS.includes(name)) {
      const cursor = progress[1]?.id;
      response = await fetch(peer.url, {
        method: 'GET',
        headers: { Accept: 'text/event-stream', 'Mcp-Session-Id': sessionId, 'MCP-Protocol-Version': PROTOCOL, 'Last-Event-ID': cursor },
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
      const replay = response.ok ? await readEvents(response, (evs) => find(evs, 3) !== undefined) : [];
      if (!response.ok) await response.body?.cancel();
      lines.push(`GET Last-Event-ID: ${cursor}: ${response.status}\n      ${short(replay)}`);
      const steps = replay.filter((e) => e.message?.method === 'notifications/progress').map((e) => e.message.params.progress);
      const complete =
        response.status === 200 && steps.join() === '3,4,5' && replay.at(-1)?.message?.result?.content?.[0]?.text === 'done 5';
      if (name === 'sdk' && !complete && response.status === 200) {
        // The SDK's example InMemoryEventStore orders a replay by sorting event ids
        // `<stream>_<Date.now()>_<random>` as strings: events stored in the same millisecond
        // come back in random order, so some of those after the cursor are skipped.
        lines.push(
          `NOTE: incomplete replay (progress [${steps}]): known limitation of the SDK example InMemoryEventStore (same-millisecond ids sort by their random suffix)`,
        );
      } else {
        expect(complete, 'resume: progress 3,4,5 then "done 5"');
      }
    }
  } finally {
    await peer.stop();
  }
  return { lines, failures };
}

const MODERN = '2026-07-28';
const EVENTS_ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientCapabilities': { extensions: { 'io.modelcontextprotocol/events': {} } },
  'io.modelcontextprotocol/clientInfo': { name: 'bench-check', version: '0' },
};
let modernId = 100;

/** A 2026-07-28 POST of `method` (the Events extension declared); `Mcp-Name` for a tools/call. */
function postModern(url, method, params) {
  const headers = {
    'Content-Type': 'application/json',
    Accept: 'application/json, text/event-stream',
    'MCP-Protocol-Version': MODERN,
    'Mcp-Method': method,
  };
  if (method === 'tools/call') headers['Mcp-Name'] = params.name;
  const body = { jsonrpc: '2.0', id: modernId++, method, params: { ...params, _meta: { ...EVENTS_ENVELOPE, ...params._meta } } };
  return fetch(url, { method: 'POST', headers, body: JSON.stringify(body), signal: AbortSignal.timeout(TIMEOUT_MS) });
}

/**
 * The E workloads' wire on `demo.note` (harness/workloads/e-events.mjs): an empty poll from now,
 * `post_note`, a poll at the first poll's cursor (that one occurrence), a push stream from that
 * cursor (active, then the occurrence replayed), and a push stream from now that hears a
 * `post_note` sent once it is active.
 */
async function checkEvents(url, lines, expect) {
  const note = (text) => postModern(url, 'tools/call', { name: 'post_note', arguments: { text } }).then((r) => r.json());
  const poll = (cursor) => postModern(url, 'events/poll', { name: 'demo.note', arguments: {}, cursor }).then((r) => r.json());
  const first = await poll(null);
  lines.push(`events/poll from now: ${JSON.stringify(first)}`);
  expect(first.result?.events?.length === 0 && typeof first.result.cursor === 'string', 'an empty poll from now, with a cursor');
  const emitted = await note('check 1');
  lines.push(`tools/call post_note: ${JSON.stringify(emitted)}`);
  expect(emitted.result !== undefined && !emitted.result.isError, 'post_note answered');
  const after = await poll(first.result?.cursor);
  lines.push(`events/poll at that cursor: ${JSON.stringify(after)}`);
  expect(
    after.result?.events?.length === 1 && after.result.events[0].data?.text === 'check 1',
    'the poll at the cursor: the one occurrence',
  );
  const isFrame = (event, method) => event.message?.method === `notifications/events/${method}`;
  let response = await postModern(url, 'events/stream', { name: 'demo.note', arguments: {}, cursor: first.result?.cursor });
  let events = await readEvents(response, (evs) => evs.some((e) => isFrame(e, 'event')));
  lines.push(`events/stream from that cursor: ${response.status}\n      ${short(events)}`);
  expect(
    isFrame(events[0] ?? {}, 'active') && events[1]?.message?.params?.data?.text === 'check 1',
    'the stream from the cursor: active, then the occurrence',
  );
  response = await postModern(url, 'events/stream', { name: 'demo.note', arguments: {}, cursor: null });
  let activeSeen;
  const active = new Promise((resolve) => (activeSeen = resolve));
  const reading = readEvents(response, (evs) => {
    if (evs.some((e) => isFrame(e, 'active'))) activeSeen();
    return evs.some((e) => e.message?.params?.data?.text === 'check live');
  });
  await Promise.race([active, reading]);
  await note('check live');
  events = await reading;
  lines.push(`events/stream from now, then post_note: ${response.status}\n      ${short(events)}`);
  expect(
    isFrame(events[0] ?? {}, 'active') && events.some((e) => isFrame(e, 'event') && e.message.params.data?.text === 'check live'),
    'the live stream hears the note',
  );
}

/**
 * M1–M3's wire (harness/workloads/m-modern.mjs): `server/discover` naming 2026-07-28, `echo`,
 * `progress {n: 5}` with a progress token (5 progress notifications, then "done 5"), and a
 * `subscriptions/listen` stream that hears the tool list change a `changed` call publishes
 * once the stream is acknowledged.
 */
async function checkModern(url, lines, expect) {
  const discover = await postModern(url, 'server/discover', {}).then((r) => r.json());
  lines.push(`server/discover: ${JSON.stringify(discover.result?.supportedVersions)}`);
  expect(discover.result?.supportedVersions?.includes(MODERN) === true, 'server/discover names 2026-07-28');
  let response = await postModern(url, 'tools/call', { name: 'echo', arguments: { text: 'hello bench' } });
  let events = await bodyOf(response);
  lines.push(`tools/call echo: ${response.status}\n      ${short(events)}`);
  expect(events.at(-1)?.message?.result?.content?.[0]?.text === 'hello bench', 'echo');
  response = await postModern(url, 'tools/call', { name: 'progress', arguments: { n: 5 }, _meta: { progressToken: 'p-5' } });
  events = await bodyOf(response);
  const progress = events.filter((e) => e.message?.method === 'notifications/progress');
  lines.push(`tools/call progress {n: 5}: ${response.status}\n      ${short(events)}`);
  expect(
    progress.length === 5 &&
      progress.every((e, i) => e.message.params.progressToken === 'p-5' && e.message.params.progress === i + 1) &&
      events.at(-1)?.message?.result?.content?.[0]?.text === 'done 5',
    'progress: 5 notifications 1..5, then "done 5"',
  );
  response = await postModern(url, 'subscriptions/listen', { notifications: { toolsListChanged: true } });
  let acknowledged;
  const ack = new Promise((resolve) => (acknowledged = resolve));
  const reading = readEvents(response, (evs) => {
    if (evs.some((e) => e.message?.method === 'notifications/subscriptions/acknowledged')) acknowledged();
    return evs.some((e) => e.message?.method === 'notifications/tools/list_changed');
  });
  await Promise.race([ack, reading]);
  const changed = await postModern(url, 'tools/call', { name: 'changed', arguments: {} }).then(bodyOf);
  events = await reading;
  lines.push(
    `subscriptions/listen, then changed (${JSON.stringify(changed.at(-1)?.message?.result)}): ${response.status}\n      ${short(events)}`,
  );
  expect(
    events.some((e) => e.message?.method === 'notifications/tools/list_changed'),
    'the listen stream hears the change',
  );
}

let failed = 0;
for (const [index, name] of selected.entries()) {
  const port = basePort + index;
  console.log(`== ${name} (port ${port})`);
  try {
    const { lines, failures } = await checkPeer(name, port);
    for (const line of lines) console.log(`   ${line}`);
    console.log(failures.length === 0 ? `   OK` : `   FAILED: ${failures.join('; ')}`);
    if (failures.length > 0) failed++;
  } catch (error) {
    failed++;
    console.log(`   FAILED: ${error?.stack ?? error}`);
  }
}
console.log(`${selected.length - failed} passed, ${failed} failed`);
process.exitCode = failed === 0 ? 0 : 1;
