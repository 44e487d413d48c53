/**
 * Answers: reading one (an SSE stream may stay open, anything else is read whole) and the shape
 * every error answer must have, the wire contract's JSON-RPC error. The world (fuzz-world.ts)
 * judges with them, and the witness (fuzz-witness.ts) reads its answers with `readAnswer`.
 */

/** How long any answer but an SSE stream may take to arrive whole. */
export const WHOLE_ANSWER_MS = 10_000;

/**
 * Reads an answer. An SSE stream can stay open, so it is read until `idleMs` pass with
 * nothing new or `totalMs` in all; any other answer is finite, and read whole (within
 * WHOLE_ANSWER_MS: on a loaded machine its body can come well after its headers).
 */
export async function readAnswer(
  response: Response,
  idleMs: number,
  totalMs: number,
  leave: () => void = () => {},
): Promise<{ text: string; complete: boolean }> {
  if (response.body === null) return { text: '', complete: true };
  if (!(response.headers.get('Content-Type') ?? '').includes('text/event-stream')) {
    idleMs = WHOLE_ANSWER_MS;
    totalMs = WHOLE_ANSWER_MS;
  }
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  const deadline = Date.now() + totalMs;
  let text = '';
  let complete = false;
  try {
    for (;;) {
      const wait = Math.min(idleMs, deadline - Date.now());
      if (wait <= 0) break;
      let timer: ReturnType<typeof setTimeout> | undefined;
      const result = await Promise.race([
        reader.read(),
        new Promise<'quiet'>((resolve) => {
          timer = setTimeout(() => resolve('quiet'), wait);
        }),
      ]);
      if (timer !== undefined) clearTimeout(timer);
      if (result === 'quiet') break;
      if (result.done) {
        complete = true;
        break;
      }
      if (text.length < 1_000_000) text += decoder.decode(result.value, { stream: true });
    }
  } catch {
    complete = true; // the server ended the stream abruptly: what arrived is judged
  } finally {
    if (!complete) leave();
    reader.cancel().catch(() => undefined);
  }
  return { text, complete };
}

/** Why an error answer is not `{"jsonrpc":"2.0","id":…,"error":{"code","message"[,"data"]}}` as application/json. */
export function errorShapeProblem(text: string, contentType: string): string | undefined {
  if (!contentType.toLowerCase().startsWith('application/json')) return `Content-Type ${JSON.stringify(contentType)}`;
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return 'not JSON';
  }
  if (!isObject(body)) return 'not an object';
  const keys = Object.keys(body).sort().join(',');
  if (keys !== 'error,id,jsonrpc') return `members ${keys}`;
  if (body.jsonrpc !== '2.0') return 'jsonrpc';
  if (!(body.id === null || typeof body.id === 'string' || typeof body.id === 'number')) return 'id';
  const error = body.error;
  if (!isObject(error)) return 'error not an object';
  if (!Number.isInteger(error.code)) return 'error.code';
  if (typeof error.message !== 'string') return 'error.message';
  const extra = Object.keys(error).filter((k) => !['code', 'message', 'data'].includes(k));
  if (extra.length > 0) return `error members ${extra.join(',')}`;
  return undefined;
}

export const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

export function headersOf(response: Response): Record<string, string> {
  const out: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    out[name] = value;
  });
  return out;
}
