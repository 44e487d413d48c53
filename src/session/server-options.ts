import type { McpServerOptions } from '@modelcontextprotocol/server';
import { SUPPORTED_PROTOCOL_VERSIONS } from '../core/protocol-version.ts';

/**
 * Options for an McpServer served by this transport: the caller's options, restricted to
 * the protocol versions the transport serves (the SDK would otherwise also negotiate
 * 2024-11-05 and offer 2026-07-28).
 */
export function sessionServerOptions(options: McpServerOptions = {}): McpServerOptions {
  return { ...options, supportedProtocolVersions: [...SUPPORTED_PROTOCOL_VERSIONS] };
}
