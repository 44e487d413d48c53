/**
 * The signed-in identity between the consent page and its answer: kept in KV (`OAUTH_KV`) under
 * the SHA-256 of the consent handle, sealed (AES-GCM) with a key derived from the handle, as the
 * provider keeps its own transactions: KV alone reveals neither who signed in nor the handle,
 * and only the browser holding the handle (which `approveConsent` checks is bound to it) names
 * the record. Ten minutes, the handle's own life. One KV write per sign-in, one read, one delete.
 */
import { sha256Hex } from '../../core/digest.ts';
import type { SignedInIdentity } from './identity.ts';

const TTL_SECONDS = 600;
const encoder = new TextEncoder();

const keyName = async (handle: string) => `sign-in:${await sha256Hex(handle)}`;
const sealKey = async (handle: string) =>
  crypto.subtle.importKey('raw', await crypto.subtle.digest('SHA-256', encoder.encode(`sign-in-identity:${handle}`)), 'AES-GCM', false, [
    'encrypt',
    'decrypt',
  ]);

export async function keepIdentity(kv: KVNamespace, handle: string, identity: SignedInIdentity): Promise<void> {
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const sealed = await crypto.subtle.encrypt({ name: 'AES-GCM', iv }, await sealKey(handle), encoder.encode(JSON.stringify(identity)));
  const value = new Uint8Array(iv.length + sealed.byteLength);
  value.set(iv);
  value.set(new Uint8Array(sealed), iv.length);
  await kv.put(await keyName(handle), value, { expirationTtl: TTL_SECONDS });
}

/** The identity kept for `handle`, deleted as it is read; undefined if there is none (or it does not open). */
export async function takeIdentity(kv: KVNamespace, handle: string): Promise<SignedInIdentity | undefined> {
  const key = await keyName(handle);
  const value = await kv.get(key, 'arrayBuffer');
  if (value === null) return undefined;
  await kv.delete(key);
  try {
    const bytes = new Uint8Array(value);
    const plain = await crypto.subtle.decrypt({ name: 'AES-GCM', iv: bytes.slice(0, 12) }, await sealKey(handle), bytes.slice(12));
    return JSON.parse(new TextDecoder().decode(plain)) as SignedInIdentity;
  } catch {
    return undefined;
  }
}

export async function forgetIdentity(kv: KVNamespace, handle: string): Promise<void> {
  await kv.delete(await keyName(handle));
}
