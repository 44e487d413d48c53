/**
 * A refusal's body as the client reads it (src/client/http.ts `readError`): its JSON-RPC error
 * where it has one; never more than MAX_ERROR_BYTES of it (an intermediary's page of any size
 * costs the client that much at most, the rest cancelled); and never a wait past the idle limit
 * on a body that stops coming, which a connection dropped without a word would make forever.
 */
import { describe, expect, it } from 'vitest';
import { MAX_ERROR_BYTES, readError } from '../../src/client/http.ts';

const encoder = new TextEncoder();

/** A refusal whose body is `chunks`, then — unless `ends` — nothing, ever; with what its reader took. */
function refusal(chunks: readonly Uint8Array[], { ends = true } = {}) {
  const seen = { pulled: 0, cancelled: false };
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (seen.pulled === chunks.length) {
        if (ends) controller.close();
        return ends ? undefined : new Promise<void>(() => undefined);
      }
      controller.enqueue(chunks[seen.pulled++]!);
    },
    cancel() {
      seen.cancelled = true;
    },
  });
  return { response: new Response(body, { status: 409, headers: { 'Content-Type': 'application/json' } }), seen };
}

describe('readError', () => {
  it('reads the JSON-RPC error of a refusal, and its text', async () => {
    const text = JSON.stringify({ jsonrpc: '2.0', id: 1, error: { code: -32000, message: 'no', data: { reason: 'unknown_stream' } } });
    const { response } = refusal([encoder.encode(text.slice(0, 20)), encoder.encode(text.slice(20))]);
    expect(await readError(response, 1_000)).toEqual({
      error: { code: -32000, message: 'no', data: { reason: 'unknown_stream' } },
      text,
    });
  });

  it('reads a body that is not JSON as its text, with no error', async () => {
    expect(await readError(new Response('<html>Bad Gateway</html>', { status: 502 }))).toEqual({
      error: undefined,
      text: '<html>Bad Gateway</html>',
    });
  });

  it('decodes a character split across chunks', async () => {
    const bytes = encoder.encode('{"error":{"message":"ÿ€𝄞"}}');
    const { response } = refusal([bytes.subarray(0, 22), bytes.subarray(22, 25), bytes.subarray(25)]);
    expect((await readError(response)).error).toEqual({ message: 'ÿ€𝄞' });
  });

  it(`reads ${MAX_ERROR_BYTES} bytes of a longer body, no more, and cancels the rest`, async () => {
    const chunk = encoder.encode('x'.repeat(10_000));
    const { response, seen } = refusal(Array.from({ length: 100 }, () => chunk));
    const { error, text } = await readError(response, 1_000);
    expect(error).toBeUndefined();
    expect(text).toBe('x'.repeat(MAX_ERROR_BYTES));
    expect(seen.pulled, 'chunks the client took of 100').toBeLessThan(10);
    expect(seen.cancelled).toBe(true);
  });

  it('gives up on a body that stops coming, after the idle limit: no error, and the body is cancelled', async () => {
    const { response, seen } = refusal([encoder.encode('{"jsonrpc":"2.0","error":{"co')], { ends: false });
    const started = Date.now();
    expect(await readError(response, 50)).toEqual({ error: undefined, text: '' });
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(seen.cancelled).toBe(true);
  });
});
