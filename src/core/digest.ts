/**
 * Bytes as lowercase hex, and the SHA-256 of a text so written: what the server keeps or compares
 * in place of a secret or an identity (a registration token, a sign-in handle, a listen's tag), and
 * a metrics index. One spelling, so every place that compares two of them compares the same text.
 */

/** The first `length` bytes (all, by default) of `bytes`, as lowercase hex. */
export function hex(bytes: ArrayBuffer | Uint8Array, length?: number): string {
  const view = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
  return Array.from(view.subarray(0, length ?? view.length), (byte) => byte.toString(16).padStart(2, '0')).join('');
}

/** The SHA-256 of `text`'s UTF-8, its first `length` bytes (all 32, by default) as lowercase hex. */
export async function sha256Hex(text: string, length?: number): Promise<string> {
  return hex(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text)), length);
}
