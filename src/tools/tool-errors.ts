/**
 * A tool that throws is answered by the SDK's McpServer with an `isError` result carrying the
 * error's message, and nothing else: the stack, and that anything failed at all, reach no log.
 * This logs each such error once, as `mcp.tool.error` with the tool's name, the error and its
 * stack; what the client is sent stays the SDK's, unchanged.
 *
 * @modelcontextprotocol/server 2.4.0 has no hook for it: McpServer's tools/call handler catches
 * the callback's error itself (`createToolError(message)`), and reports nothing to `onerror`. So
 * each tool registered on a server the library is handed (a session's `createServer`, the modern
 * factory, a task's round) gets its callback wrapped through the SDK's public
 * `RegisteredTool.update({ callback })`, before the server is connected (an update then sends no
 * `list_changed`). Finding the registered tools reads one private field of McpServer,
 * `_registeredTools`, structurally: if a later SDK renames it, nothing is wrapped — tools run as
 * ever, only this log line is lost (test/worker/tool-error-log.test.ts fails, saying so).
 *
 * Not logged: the library's own refusals (McpHttpError: a task limit, a configuration error, which
 * the Worker sends instead of the SDK's answer) and the SDK's URL-elicitation signal, which is a
 * protocol answer, not a failure.
 */
import { McpHttpError } from '../core/errors.ts';
import { log } from '../core/log.ts';

type Callback = (...args: unknown[]) => unknown;

/** What this module reads of an McpServer and of its registered tools. */
interface ToolRegistry {
  readonly _registeredTools?: Record<string, { readonly handler?: unknown; update?(updates: { callback: Callback }): void }>;
}

/** The SDK's URL-elicitation-required error code (ProtocolErrorCode.UrlElicitationRequired), which its handler rethrows. */
const URL_ELICITATION_REQUIRED = -32042;

/** Wraps every tool registered on `server` so that a thrown error is logged; returns `server`. */
export function logToolErrors<S extends object>(server: S): S {
  const tools = (server as ToolRegistry)._registeredTools;
  if (tools === undefined || typeof tools !== 'object') return server;
  for (const [name, tool] of Object.entries(tools)) {
    const handler = tool.handler;
    if (typeof handler !== 'function' || typeof tool.update !== 'function' || wrapped.has(handler)) continue;
    const callback: Callback = async (...args) => {
      try {
        return await (handler as Callback)(...args);
      } catch (error) {
        if (isToolFailure(error)) log(toolErrorLine(name, error));
        throw error;
      }
    };
    wrapped.add(callback);
    tool.update({ callback });
  }
  return server;
}

/** Callbacks already wrapped here: a server handed over twice is wrapped once. */
const wrapped = new WeakSet<object>();

function isToolFailure(error: unknown): boolean {
  if (error instanceof McpHttpError) return false;
  return !(typeof error === 'object' && error !== null && (error as { code?: unknown }).code === URL_ELICITATION_REQUIRED);
}

/** The log line of a tool's thrown error. */
export function toolErrorLine(tool: string, error: unknown) {
  return {
    msg: 'mcp.tool.error',
    tool,
    error: String(error),
    stack: error instanceof Error && typeof error.stack === 'string' ? error.stack : '',
  } as const;
}
