/**
 * Which protocol era serves a request. 2026-07-28 is stateless ("modern"): every request
 * carries its revision in `_meta` and in `MCP-Protocol-Version`, and the SDK's handler serves
 * it (src/stateless/). The sessionful revisions ("legacy") go to the session engine. The spec
 * lets one endpoint serve both, chosen by how each request opens; nothing is remembered, so a
 * client may probe modern and open a legacy session at the same time.
 */
import { SUPPORTED_PROTOCOL_VERSIONS } from './protocol-version.ts';

/** The stateless revisions served beside the sessionful ones. */
export const MODERN_PROTOCOL_VERSIONS = ['2026-07-28'] as const;

export type Era = 'modern' | 'legacy';

/**
 * What the `MCP-Protocol-Version` header alone decides: a modern revision is modern (a modern
 * request MUST carry it, equal to its `_meta` claim, and "ignores Mcp-Session-Id"); a
 * sessionful revision is legacy; absent or unknown, the body decides (the SDK's
 * `isLegacyRequest`, which the session engine's requests never need: a request of an existing
 * session is legacy unless its header says otherwise, so its body still crosses the Worker
 * unread).
 */
export function eraOfHeader(value: string | null): Era | undefined {
  if (value === null) return undefined;
  const version = value.trim();
  if ((MODERN_PROTOCOL_VERSIONS as readonly string[]).includes(version)) return 'modern';
  if ((SUPPORTED_PROTOCOL_VERSIONS as readonly string[]).includes(version)) return 'legacy';
  return undefined;
}
