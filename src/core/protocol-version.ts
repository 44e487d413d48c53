/**
 * The sessionful revisions of the Streamable HTTP transport this server speaks.
 * 2026-07-28 dropped sessions; serving it is separate work.
 */
export const SUPPORTED_PROTOCOL_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26'] as const;

export type ProtocolVersion = (typeof SUPPORTED_PROTOCOL_VERSIONS)[number];

/**
 * 2025-06-18 transports: "If the server does not receive an MCP-Protocol-Version header,
 * and has no other way to identify the version [...] the server SHOULD assume protocol
 * version 2025-03-26."
 */
export const ASSUMED_PROTOCOL_VERSION: ProtocolVersion = '2025-03-26';

export function isSupportedProtocolVersion(value: string): value is ProtocolVersion {
  return (SUPPORTED_PROTOCOL_VERSIONS as readonly string[]).includes(value);
}

/**
 * SEP-1699 (2025-11-25): the server SHOULD open every SSE stream with an event that has an
 * id and empty data, so the client holds a cursor before anything else happens. Decided by
 * the session's negotiated version, never the per-request header: clients (the conformance
 * suite among them) send an older header on a 2025-11-25 session.
 */
export function sendsPrimingEvent(negotiated: ProtocolVersion): boolean {
  return negotiated >= '2025-11-25';
}

/** JSON-RPC batching existed only in 2025-03-26; 2025-06-18 removed it. */
export function acceptsBatches(negotiated: ProtocolVersion): boolean {
  return negotiated === '2025-03-26';
}
