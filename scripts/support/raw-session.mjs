// Raw HTTP for the scripts that check the wire itself (walk-resume-table, race, restarts): a
// session opened by hand (initialize, then notifications/initialized) and an SSE reader on the
// library's own parser (Node 24 runs the .ts file as is).
import { SseParser } from '../../src/core/sse-parser.ts';

export const VERSION = '2025-11-25';
export const JSON_HEADERS = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };

/**
 * Opens a session at `url` as client `name`. Its `headers` name it on every request; `post`,
 * `get` (with a cursor: a resume) and `delete` send with them. `timeoutMs` bounds each request.
 */
export async function openRawSession(url, name, { timeoutMs } = {}) {
  const send = (init) => fetch(url, { ...init, ...(timeoutMs !== undefined && { signal: AbortSignal.timeout(timeoutMs) }) });
  const init = await send({
    method: 'POST',
    headers: JSON_HEADERS,
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: VERSION, capabilities: {}, clientInfo: { name, version: '1' } },
    }),
  });
  const id = init.headers.get('mcp-session-id');
  // The session's first epoch (drawn at random): the first part of its event ids.
  const epoch = Number(init.headers.get('mcp-session-epoch'));
  await init.body?.cancel();
  if (init.status !== 200 || id === null) throw new Error(`initialize: ${init.status}`);
  const headers = { 'Mcp-Session-Id': id, 'MCP-Protocol-Version': VERSION };
  const session = {
    id,
    epoch,
    headers,
    post: (body) => send({ method: 'POST', headers: { ...JSON_HEADERS, ...headers }, body: JSON.stringify(body) }),
    get: (cursor) =>
      send({ headers: { Accept: 'text/event-stream', ...headers, ...(cursor !== undefined && { 'Last-Event-ID': cursor }) } }),
    delete: () => send({ method: 'DELETE', headers }),
  };
  const initialized = await session.post({ jsonrpc: '2.0', method: 'notifications/initialized' });
  await initialized.body?.cancel();
  if (initialized.status !== 202) throw new Error(`initialized: ${initialized.status}`);
  return session;
}

/**
 * The events (`id`, `data`: '' when none) of an SSE response, until `until(events)` holds after
 * an event, the stream ends, or `ms` pass; the rest of the stream is cancelled.
 */
export async function readEvents(response, { until = () => false, ms = Number.POSITIVE_INFINITY } = {}) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  const parser = new SseParser();
  const events = [];
  const deadline = Date.now() + ms;
  let timer;
  const timeout = Number.isFinite(ms)
    ? new Promise((resolve) => (timer = setTimeout(() => resolve('timeout'), ms)))
    : new Promise(() => {});
  try {
    while (Date.now() < deadline) {
      const chunk = await Promise.race([reader.read(), timeout]);
      if (chunk === 'timeout' || chunk.done) break;
      for (const frame of parser.push(decoder.decode(chunk.value, { stream: true }))) {
        events.push({ id: frame.id, data: frame.data ?? '' });
        if (until(events)) return events;
      }
    }
  } finally {
    clearTimeout(timer);
    await reader.cancel().catch(() => undefined);
  }
  return events;
}
