/**
 * MAX_CONNECTION_AGE_MS=400 in this project (SEP-1699 polling).
 */
import { describe, expect, it } from 'vitest';
import { openSession } from '../support/mcp-http.ts';
import { ENDED, SseReader } from '../support/sse-reader.ts';

describe('maximum connection age (SEP-1699 polling)', () => {
  it('the server ends an old connection, not its stream: the client resumes where it was', async () => {
    const session = await openSession();
    const response = await session.get();
    const stream = response.headers.get('Mcp-Stream-Id');
    const reader = new SseReader(response);
    const [priming] = await reader.take(1);
    expect(priming!.retry).toBe(1000);
    expect(await reader.next(2_000)).toBe(ENDED);

    const resumed = await session.get(priming!.id);
    expect(resumed.status).toBe(200);
    expect(resumed.headers.get('Mcp-Stream-Resumed')).toBe('true');
    expect(resumed.headers.get('Mcp-Stream-Id')).toBe(stream);
    await resumed.body?.cancel();
  });
});
