/**
 * `mcp.request`: one line per request to the endpoint, whoever answered it, with no message
 * body and only a prefix of the session id.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { initializeRequest, openSession, postRaw } from '../support/mcp-http.ts';

let lines: Record<string, unknown>[] = [];
beforeEach(() => {
  lines = [];
  vi.spyOn(console, 'log').mockImplementation((line: unknown) => {
    const parsed = typeof line === 'string' && line.startsWith('{') ? JSON.parse(line) : undefined;
    if (parsed?.msg === 'mcp.request') lines.push(parsed);
  });
});
afterEach(() => vi.restoreAllMocks());

describe('the request log', () => {
  it('logs a session’s initialize once: method, status, the id’s first 8 characters, its stream and epoch', async () => {
    const response = await postRaw(initializeRequest());
    const id = response.headers.get('Mcp-Session-Id')!;
    await response.body?.cancel();
    expect(lines).toEqual([
      expect.objectContaining({
        method: 'POST',
        status: 200,
        session: id.slice(0, 8),
        stream: 1,
        resumed: 'false',
        epoch: Number(response.headers.get('Mcp-Session-Epoch')),
      }),
    ]);
    expect(JSON.stringify(lines)).not.toContain(id);
    expect(JSON.stringify(lines)).not.toContain('clientInfo');
  });

  it('logs a refused request once, with its status', async () => {
    const response = await postRaw(initializeRequest(), { Origin: 'http://evil.example.com' });
    expect(response.status).toBe(403);
    expect(lines).toEqual([expect.objectContaining({ method: 'POST', status: 403, session: null })]);
  });

  it('logs a request on a session once', async () => {
    const session = await openSession();
    lines = [];
    await (await session.post({ jsonrpc: '2.0', id: 5, method: 'ping' })).text();
    expect(lines).toEqual([expect.objectContaining({ method: 'POST', status: 200, session: session.id.slice(0, 8) })]);
  });
});
