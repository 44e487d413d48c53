// Walks every row of the GET + Last-Event-ID decision table (docs/wire-contract.md) against
// a running server with raw fetch, as any HTTP client would, and prints what each row answered.
// Exits non-zero if an answer differs from the table.
// Usage: node scripts/ci/walk-resume-table.mjs [url]   (default http://localhost:8787/mcp)
// Bounded: every read has a deadline; the pruning row makes at most 12 calls.

import { openRawSession, readEvents } from '../support/raw-session.mjs';

/** A session with the walk's calls: `start` a tools/call (its stream is in the headers), or `call` it whole. */
async function session(url) {
  const s = await openRawSession(url, 'walk');
  let next = 1;
  return Object.assign(s, {
    start: (name, args, id = next++) =>
      s.post({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args, _meta: { progressToken: `p${id}` } } }),
    async call(name, args) {
      const response = await s.start(name, args);
      return { stream: response.headers.get('mcp-stream-id'), events: await readEvents(response, { ms: 30_000 }) };
    },
  });
}

async function answer(response) {
  const resumed = response.headers.get('mcp-stream-resumed');
  const stream = response.headers.get('mcp-stream-id');
  if (response.headers.get('content-type')?.startsWith('application/json')) {
    const body = await response.json();
    return { status: response.status, reason: body.error?.data?.reason, cursor: body.error?.data?.cursor };
  }
  return { status: response.status, resumed, stream, events: await readEvents(response, { ms: 2_000 }) };
}

const rows = [];
function row(name, cursor, got, expected, note = '') {
  const ok = Object.entries(expected).every(([key, value]) => got[key] === value);
  const shown = [got.status, got.reason, got.resumed !== undefined && got.resumed !== null ? `resumed=${got.resumed}` : undefined]
    .filter(Boolean)
    .join(' ');
  rows.push({ ok, line: `${ok ? 'ok  ' : 'FAIL'} ${name.padEnd(46)} ${String(cursor).padEnd(18)} → ${shown}${note ? `  (${note})` : ''}` });
}

export async function walkResumeTable(url) {
  const s = await session(url);

  row('not three decimal integers', 'x-1', await answer(await s.get('x-1')), { status: 400, reason: 'malformed_cursor' });

  const unknown = await fetch(url, {
    headers: { Accept: 'text/event-stream', 'Mcp-Session-Id': 'A'.repeat(43), 'Last-Event-ID': '1-1-0' },
  });
  row('session unknown, ended or expired', '1-1-0', await answer(unknown), { status: 404 });

  const done = await s.call('countdown', { from: 3, interval_ms: 0 });
  const S = done.stream;
  const last = done.events.at(-1).id;
  const E = s.epoch;
  row('stream not in this session', `${E}-9999-0`, await answer(await s.get(`${E}-9999-0`)), { status: 409, reason: 'unknown_stream' });
  row("E is not the stream's epoch", `${E + 1}-${S}-0`, await answer(await s.get(`${E + 1}-${S}-0`)), {
    status: 409,
    reason: 'unknown_stream',
  });
  row("N beyond the stream's last event", `${E}-${S}-99`, await answer(await s.get(`${E}-${S}-99`)), {
    status: 409,
    reason: 'cursor_ahead',
  });

  const firstStandalone = await s.get();
  const [priming] = await readEvents(firstStandalone, { until: (events) => events.length >= 1, ms: 5_000 });
  await (await s.get()).body.cancel(); // supersedes it
  row('a superseded standalone stream', priming.id, await answer(await s.get(priming.id)), { status: 409, reason: 'stream_superseded' });

  const running = await s.start('countdown', { from: 20, interval_ms: 200 });
  const seen = await readEvents(running, { until: (events) => events.length >= 2, ms: 5_000 });
  const live = await answer(await s.get(seen.at(-1).id));
  row('stream open', seen.at(-1).id, live, { status: 200, resumed: 'true' }, `${live.events.length} events in 2 s, live`);

  const before = await answer(await s.get(`${E}-${S}-1`));
  const replayedResult = before.events.some((e) => e.data.includes('"result"'));
  row(
    'finished, N before its final event',
    `${E}-${S}-1`,
    { ...before, replayedResult },
    { status: 200, resumed: 'true', replayedResult: true },
    `replayed ${before.events.length - 1} incl. the result, closed`,
  );

  const atFinal = await answer(await s.get(last));
  row(
    'finished, N is its final event',
    last,
    atFinal,
    { status: 200, resumed: 'false' },
    `new standalone stream ${atFinal.stream}, nothing replayed`,
  );

  const fresh = await answer(await s.get());
  row('no Last-Event-ID', '—', fresh, { status: 200, resumed: 'false' }, `stream ${fresh.stream}, supersedes the previous`);

  const duplicate = await answer(await s.start('tally', { key: 'walk' }, 1));
  row('POST reusing a request id', 'id 1', duplicate, { status: 409, reason: 'duplicate_request_id' }, `cursor ${duplicate.cursor}`);

  // events_pruned: push the session past MAX_SESSION_EVENTS, which prunes the oldest finished
  // stream first.
  let pruned;
  for (let calls = 0; calls < 12; calls++) {
    pruned = await answer(await s.get(`${E}-${S}-1`));
    if (pruned.status !== 200) break;
    await s.call('countdown', { from: 10_000, interval_ms: 0 });
  }
  row('events after N no longer retained', `${E}-${S}-1`, pruned, { status: 410, reason: 'events_pruned' });

  await fetch(url, { method: 'DELETE', headers: { 'Mcp-Session-Id': s.id } });
  for (const { line } of rows) console.log(line);
  const failed = rows.filter((r) => !r.ok).length;
  console.log(`decision table: ${rows.length - failed} rows as documented, ${failed} not`);
  return failed === 0;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const ok = await walkResumeTable(process.argv[2] ?? 'http://localhost:8787/mcp');
  process.exit(ok ? 0 : 1);
}
