/**
 * Integrity for MRTR `requestState` (2026-07-28, multi-round-trip requests). The state a tool
 * hands the client comes back as attacker-controlled input, so "if it influences authorization
 * or logic it MUST be integrity-protected and rejected when verification fails". The SDK's
 * HMAC codec does the cryptography; this module keys it and binds it:
 * - keyed by the `REQUEST_STATE_KEY` secret (`wrangler secret put`), with
 *   `REQUEST_STATE_KEY_PREVIOUS` also accepted while a key is rotated; without one (local
 *   development), by a key generated for this isolate — never a constant in the source;
 * - bound to the request's method, target (`tools/call` of `deploy`, `prompts/get` of …) and
 *   principal: a state minted for one tool, or for one principal, is refused by another;
 * - valid for `ttlSeconds` (default 300).
 * Refusals surface as the SDK's `-32602 Invalid or expired requestState`.
 */
import { createRequestStateCodec, type RequestStateCodec, type ServerContext } from '@modelcontextprotocol/server';
import { decodeHeaderValue } from '../core/header-value.ts';
import { log } from '../core/log.ts';

export interface RequestStateSecrets {
  readonly REQUEST_STATE_KEY?: string;
  readonly REQUEST_STATE_KEY_PREVIOUS?: string;
}

/** What a modern tool uses: `mint` for the state it returns, `verify` for `McpServer`'s `requestState` option. */
export interface RequestStateSeal {
  mint(payload: unknown, ctx: ServerContext): Promise<string>;
  verify(state: string, ctx: ServerContext): Promise<unknown>;
}

const MIN_KEY_BYTES = 32;

/**
 * The request a state belongs to: its method, the name (or URI) its `Mcp-Name` header carries,
 * and who asked (the principal the Worker established): a state minted for one principal is
 * refused for another.
 */
export function bindingOf(ctx: ServerContext): string {
  const name = ctx.http?.req?.headers.get('Mcp-Name');
  const principal = (ctx.http?.authInfo?.extra as { principal?: { id?: unknown } } | undefined)?.principal?.id;
  const target = name === null || name === undefined ? '' : (decodeHeaderValue(name) ?? '');
  return `${ctx.mcpReq.method}\0${target}\0${typeof principal === 'string' ? principal : 'anonymous'}`;
}

let isolateKey: string | undefined;

/** A development key, made once per isolate on first use (workerd allows no randomness at global scope). */
function developmentKey(): string {
  if (isolateKey === undefined) {
    isolateKey = [...crypto.getRandomValues(new Uint8Array(32))].map((b) => b.toString(16).padStart(2, '0')).join('');
    // Said once per isolate: deployed, a state minted here is refused by every other isolate.
    log({ msg: 'mcp.modern.error', error: 'REQUEST_STATE_KEY is not set: requestState is sealed with a key of this isolate only' });
  }
  return isolateKey;
}

export function requestStateSeal(
  { REQUEST_STATE_KEY, REQUEST_STATE_KEY_PREVIOUS }: RequestStateSecrets,
  ttlSeconds = 300,
): RequestStateSeal {
  if (REQUEST_STATE_KEY === undefined && REQUEST_STATE_KEY_PREVIOUS !== undefined) {
    throw new Error('configuration: REQUEST_STATE_KEY_PREVIOUS is set without REQUEST_STATE_KEY');
  }
  for (const [name, key] of Object.entries({ REQUEST_STATE_KEY, REQUEST_STATE_KEY_PREVIOUS })) {
    if (key !== undefined && new TextEncoder().encode(key).byteLength < MIN_KEY_BYTES) {
      throw new Error(`configuration: ${name} must be at least ${MIN_KEY_BYTES} bytes`);
    }
  }
  let codecs: RequestStateCodec[] | undefined;
  const codecsNow = (): RequestStateCodec[] => {
    codecs ??= [REQUEST_STATE_KEY ?? developmentKey(), REQUEST_STATE_KEY_PREVIOUS]
      .filter((key): key is string => key !== undefined)
      .map((key) => createRequestStateCodec({ key, ttlSeconds, bind: bindingOf }));
    return codecs;
  };
  return {
    mint: (payload, ctx) => codecsNow()[0]!.mint(payload, ctx),
    async verify(state, ctx) {
      const [current, previous] = codecsNow();
      try {
        return await current!.verify(state, ctx);
      } catch (error) {
        // During a rotation, states minted under the previous key are still honoured.
        if (previous === undefined) throw error;
        return previous.verify(state, ctx);
      }
    },
  };
}
