/**
 * Every line this server logs, as one typed union: one JSON object per line, readable in
 * `wrangler tail` and Workers Logs. Message bodies and whole session ids are never logged.
 * Adding a kind here is the only way to add a log line; docs/operations.md "Logs" documents each.
 */
export type LogEvent =
  /** One per request at the edge (unless `REQUEST_LOG=off`). `session`: the id's first 8 characters. */
  | {
      readonly msg: 'mcp.request';
      readonly method: string;
      readonly session: string | null;
      readonly stream: number | null;
      readonly resumed: string | null;
      readonly epoch: number | null;
      readonly status: number;
      readonly duration_ms: number;
    }
  /** A bug in the Worker: answered 500. */
  | { readonly msg: 'mcp.worker.error'; readonly error: string }
  /**
   * The deployment is misconfigured (core/misconfiguration.ts): a variable, a binding, a class
   * without SQLite. Logged once per isolate (and environment) per `subject`, a binding's or
   * variable's name; every request it concerns is answered 500 with the same `error`, the fix.
   */
  | { readonly msg: 'mcp.config.error'; readonly subject: string; readonly error: string }
  /**
   * A tool threw (tools/tool-errors.ts): the client got the SDK's `isError` result, its message
   * only; the log gets the tool's name, the error and its stack.
   */
  | { readonly msg: 'mcp.tool.error'; readonly tool: string; readonly error: string; readonly stack: string }
  /**
   * MCP Events: a push stream's feed failed or fell out of step with its log (events/push-stream.ts);
   * the stream attaches again from its own position.
   */
  | { readonly msg: 'mcp.events.error'; readonly error: string }
  /**
   * MCP Events: the author's `read` of an upstream-backed type (events/upstream-event-type.ts)
   * threw or answered a page it may not (a payload its schema refuses, over the byte bound, a
   * cursor not its own). The client was answered UpstreamError, without these words.
   */
  | { readonly msg: 'mcp.events.upstream_error'; readonly type: string; readonly error: string }
  /** MCP Events served under the public development cursor key: no EVENTS_CURSOR_KEY, on loopback (events/cursor-keys.ts). Once per isolate. */
  | { readonly msg: 'mcp.events.development_key' }
  /** A webhook subscription's object failed a run (its alarm or a poke): logged, its alarm set again. `subscription`: the id's first 12 characters. */
  | { readonly msg: 'mcp.webhook.error'; readonly subscription: string; readonly error: string }
  /** A webhook subscription ended: expired, unsubscribed, or after its `terminated` envelope (`cause`). */
  | { readonly msg: 'mcp.webhook.ended'; readonly subscription: string; readonly cause: string }
  /** A failure the SDK's 2026-07-28 handler reported (a handler that threw, a transport failure), or the bus's. */
  | { readonly msg: 'mcp.modern.error'; readonly error: string }
  /** A 2026-07-28 request the SDK refused (the client's mistake, answered 4xx): not a failure (stateless/sdk-reports.ts). */
  | { readonly msg: 'mcp.modern.rejected'; readonly reason: string }
  /** A bug in the session object: answered 500. */
  | { readonly msg: 'mcp.session.error'; readonly error: string }
  /** Something the SDK could hand to no one (say, a response it failed to send). */
  | { readonly msg: 'mcp.session.sdk_error'; readonly error: string }
  /** Setting the object's alarm failed: idle expiry may be late. */
  | { readonly msg: 'mcp.session.alarm_error'; readonly error: string }
  /** A batch of held notifications failed to store; none of it was delivered. */
  | { readonly msg: 'mcp.session.store_error'; readonly error: string }
  /** A tool's result too large to store: the call was answered with an error instead. */
  | { readonly msg: 'mcp.session.answer_too_large'; readonly bytes: number; readonly limit: number }
  /** A revived server refused the log level the session had stored; the revival went on. */
  | { readonly msg: 'mcp.session.level_refused'; readonly level: string }
  /** A task's object found it working after its instance ended: it is failed, never re-run. `task`: the id's first 8 characters. */
  | { readonly msg: 'mcp.task.interrupted'; readonly task: string }
  /** A bug in a task's object or its round: the task is failed. */
  | { readonly msg: 'mcp.task.error'; readonly task: string; readonly error: string }
  /** The metrics dataset refused a data point (src/metrics/metrics.ts); what it counted went on. */
  | { readonly msg: 'mcp.metrics.error'; readonly error: string }
  /** An idle session was deleted on its alarm. */
  | { readonly msg: 'mcp.session.expired'; readonly idle_ms: number }
  /**
   * AUTH=oauth: the demo's sign-in page refused a request beyond loopback (auth/consent-page.ts),
   * logged once per isolate: the hostnames of the request and of MCP_RESOURCE.
   */
  | { readonly msg: 'mcp.oauth.demo_sign_in_refused'; readonly host: string; readonly resource_host: string }
  /**
   * AUTH=oauth with an identity source (auth/sign-in/flow.ts): a sign-in that failed (the
   * upstream refused, or its answer did not verify: the OAuth `code` the client is sent), or a
   * user the admission rules refused (`reason`, as the page says it).
   */
  | { readonly msg: 'mcp.oauth.sign_in_failed'; readonly code: string; readonly reason: string; readonly detail?: string }
  | { readonly msg: 'mcp.oauth.sign_in_not_admitted'; readonly reason: string };

/** Kinds that report a failure, written to the error stream. */
const FAILURES = new Set<LogEvent['msg']>([
  'mcp.worker.error',
  'mcp.config.error',
  'mcp.tool.error',
  'mcp.modern.error',
  'mcp.session.error',
  'mcp.session.sdk_error',
  'mcp.session.alarm_error',
  'mcp.session.store_error',
  'mcp.session.answer_too_large',
  'mcp.session.level_refused',
  'mcp.task.interrupted',
  'mcp.task.error',
  'mcp.metrics.error',
  'mcp.events.upstream_error',
  'mcp.webhook.error',
  'mcp.oauth.demo_sign_in_refused',
]);

export function log(event: LogEvent): void {
  const line = JSON.stringify(event);
  if (FAILURES.has(event.msg)) console.error(line);
  else console.log(line);
}
