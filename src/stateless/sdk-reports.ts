/**
 * What the SDK's 2026-07-28 handler reports through `onerror`, sorted for the log. A request it
 * refused — a header, body or revision that is not valid, a capability the client did not
 * declare — is the client's mistake, answered with a 4xx and already counted by the request's
 * `mcp.request` line: it is logged as `mcp.modern.rejected`, not on the error stream, where it
 * would page an operator for every malformed request anyone sends (the sessionful path logs
 * none of its refusals). Anything else — a handler that threw, a transport or bus failure — is
 * `mcp.modern.error`.
 *
 * The SDK tells its refusals apart only by two error classes and the start of its messages.
 * One it words differently one day is logged as a failure: louder, never hidden.
 */
import { MissingRequiredClientCapabilityError, UnsupportedProtocolVersionError } from '@modelcontextprotocol/server';
import type { LogEvent } from '../core/log.ts';

/** How the SDK's handler words a refusal (@modelcontextprotocol/server 2.4, createMcpHandler). */
const REFUSALS = [/^Rejected inbound request \(/, /^Rejected 2025-era request on a modern-only endpoint \(/, /^Unsupported Media Type: /];

/** Whether the SDK reported a request it refused, rather than a failure. */
export function isRefusal(error: unknown): boolean {
  if (error instanceof UnsupportedProtocolVersionError || error instanceof MissingRequiredClientCapabilityError) return true;
  return error instanceof Error && REFUSALS.some((pattern) => pattern.test(error.message));
}

/** The log line for what the SDK reported. */
export function sdkReport(error: unknown): LogEvent {
  return isRefusal(error) ? { msg: 'mcp.modern.rejected', reason: String(error) } : { msg: 'mcp.modern.error', error: String(error) };
}
