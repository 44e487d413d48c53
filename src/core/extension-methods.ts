/**
 * Which of this library's extension methods a 2026-07-28 request needs on its one-request
 * `McpServer`. The SDK builds a server per request, and the Worker decorated every one with the
 * Tasks extension's handlers (`tasks/get`, `tasks/update`, `tasks/cancel`, `tasks/stream`) and
 * MCP Events' (`events/*`), with the capabilities that advertise them — for a `tools/call` that
 * reaches none of them (2–3% of a modern echo call's CPU for the task methods alone in scratch
 * builds; interleaved with the code before, no difference showed: bench/README, *M1–M3*). A request needs a family's handlers when it calls one of them, and its capability
 * when the answer reports capabilities: `server/discover` ("servers MUST declare ... in
 * `capabilities.extensions`"), and `subscriptions/listen`, which the SDK hands the server's
 * capabilities. The method is the request's `Mcp-Method` header, which the SDK requires on every
 * 2026-07-28 request and refuses when it differs from the body's; without one (never served as
 * modern), every family is served, as before.
 */

export type ExtensionFamily = 'tasks' | 'events';

/** Methods whose answer reads the server's capabilities. */
const CAPABILITY_READERS: ReadonlySet<string> = new Set(['server/discover', 'subscriptions/listen']);

/** Whether a request of `method` needs `family`'s handlers and capability on its server. */
export function needsExtensionMethods(family: ExtensionFamily, method: string | undefined): boolean {
  if (method === undefined) return true;
  return method.startsWith(`${family}/`) || CAPABILITY_READERS.has(method);
}
