/**
 * Type-level checks, compiled by `npm run typecheck` (tsc -p test), never run: the client
 * entry declares the SDK's Transport contract structurally (src/client/sdk-transport.ts) so
 * that it depends on no SDK package; these lines fail the build the day the SDK's contract and
 * ours stop fitting each other.
 */
import type { Client, JSONRPCMessage, Transport, TransportSendOptions } from '@modelcontextprotocol/client';
import { callToolAsTask, ForkSafeTransport, type TaskCallingClient, type ToolResult } from '../../src/client/index.ts';
import type { JsonRpcMessage, TransportSendOptions as OurSendOptions } from '../../src/client/sdk-transport.ts';

// What a user writes: the SDK's Client connects to the transport.
export async function connect(client: Client, url: URL): Promise<void> {
  await client.connect(new ForkSafeTransport(url));
}

// The transport is the SDK's Transport as a value, too (a variable of that type).
export const asSdkTransport: Transport = new ForkSafeTransport(new URL('http://127.0.0.1/mcp'));

// Every message the SDK sends or receives is one of ours, and the SDK's send options are ours.
export const message = (sdk: JSONRPCMessage): JsonRpcMessage => sdk;
export const sendOptions = (sdk: TransportSendOptions): OurSendOptions => sdk;

// callToolAsTask takes the SDK's Client as it is, and gives back what its callTool gives.
export const taskCalling = (client: Client): TaskCallingClient => client;
export const called = (client: Client, url: string) => callToolAsTask(client, { name: 'report', arguments: { month: '2026-11' } }, { url });
export const inlineResult = async (client: Client): Promise<ToolResult> => client.callTool({ name: 'report' });
