/**
 * A body read to a bound in bytes, never buffered past it: a request's at the edge
 * (request-checks.ts), an upstream's answer in the sign-in sources. No imports, so the scripts
 * that run sign-in modules under Node's type stripping can load it.
 */

/** A body's bytes, or undefined once it passes `limit` (the rest is cancelled, never buffered). */
export async function readBoundedBytes(body: ReadableStream<Uint8Array> | null, limit: number): Promise<Uint8Array | undefined> {
  if (body === null) return new Uint8Array(0);
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => undefined);
      return undefined;
    }
    chunks.push(value);
  }
  return chunks.length === 1 ? chunks[0]! : concat(chunks, size);
}

function concat(chunks: readonly Uint8Array[], size: number): Uint8Array {
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}
