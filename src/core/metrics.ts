/**
 * What the server counts, as one typed union, and the one fixed layout each count takes as a
 * Workers Analytics Engine data point (docs/operations.md, *Metrics*, has the schema and the
 * queries). Plain data in, plain data out: src/metrics/metrics.ts writes the points, where a
 * binding is configured, and nothing anywhere when it is not.
 *
 * Never an identity, never a body: a point carries the principal only as a hash (the sampling
 * key), a tool only by its registered name, a refusal only by its typed reason.
 */
import type { RefusalReason } from './errors.ts';
import type { TaskStatus } from './task.ts';

export type MetricEra = 'legacy' | 'modern';

export type MetricEvent =
  /**
   * One per request at the edge (the Worker's endpoint path). `method`: the JSON-RPC method when
   * the request names it (`Mcp-Method`), else the HTTP method; `bytes`: its body's declared length.
   */
  | {
      readonly kind: 'request';
      readonly era: MetricEra;
      readonly method: string;
      readonly status: number;
      readonly durationMs: number;
      readonly bytes: number;
    }
  /** A typed refusal, where it is decided: its reason and status (a refused fork is one of the cursor reasons). */
  | { readonly kind: 'refusal'; readonly era: MetricEra; readonly reason: RefusalReason | 'session_not_found'; readonly status: number }
  /** A session's life: created by `initialize`, deleted by the client, or expired idle. */
  | { readonly kind: 'session'; readonly outcome: 'created' | 'deleted' | 'expired' }
  /** A stream resumed from a client's cursor (`GET` + `Last-Event-ID`). */
  | { readonly kind: 'resume' }
  /**
   * A session's `tools/call`, once answered: `ok`, `tool_error` (a result with `isError`),
   * `error` (a JSON-RPC error), or `interrupted` (its instance stopped; answered by revival); or
   * `cancelled` by its client (never answered).
   */
  | {
      readonly kind: 'call';
      readonly tool: string;
      readonly outcome: 'ok' | 'tool_error' | 'error' | 'interrupted' | 'cancelled';
      readonly durationMs: number;
      readonly events: number;
    }
  /** A task reached `status` (`working` at creation); `interrupted`: failed because its instance died. */
  | {
      readonly kind: 'task';
      readonly tool: string;
      readonly status: TaskStatus;
      readonly interrupted: boolean;
      readonly ageMs: number;
      readonly events: number;
    };

export type MetricKind = MetricEvent['kind'];

/** An Analytics Engine data point (the binding's `writeDataPoint` argument). */
export interface DataPoint {
  readonly indexes: readonly [string];
  readonly blobs: readonly [kind: string, era: string, method: string, tool: string, outcome: string, reason: string];
  readonly doubles: readonly [durationMs: number, events: number, bytes: number, status: number];
}

/**
 * The point for `event`, its fields always in the same places (queries name them `blob1` …,
 * `double1` …): blobs kind, era, method, tool, outcome, reason; doubles duration (ms), events,
 * bytes, HTTP status; index the principal's hash.
 */
export function dataPoint(event: MetricEvent, principalHash: string): DataPoint {
  const point = (
    era: string,
    method: string,
    tool: string,
    outcome: string,
    reason: string,
    durationMs = 0,
    events = 0,
    bytes = 0,
    status = 0,
  ): DataPoint => ({
    indexes: [principalHash],
    blobs: [event.kind, era, method, tool, outcome, reason],
    doubles: [durationMs, events, bytes, status],
  });
  switch (event.kind) {
    case 'request':
      return point(event.era, event.method, '', outcomeOfStatus(event.status), '', event.durationMs, 0, event.bytes, event.status);
    case 'refusal':
      return point(event.era, '', '', 'refused', event.reason, 0, 0, 0, event.status);
    case 'session':
      return point('legacy', '', '', event.outcome, '');
    case 'resume':
      return point('legacy', 'GET', '', 'resumed', '');
    case 'call':
      return point('legacy', 'tools/call', event.tool, event.outcome, '', event.durationMs, event.events);
    case 'task':
      return point(
        'modern',
        'tools/call',
        event.tool,
        event.status,
        event.interrupted ? 'task_interrupted' : '',
        event.ageMs,
        event.events,
      );
  }
}

/** `ok` below 400, `refused` for a 4xx (the client's to fix), `error` for a 5xx. */
export function outcomeOfStatus(status: number): 'ok' | 'refused' | 'error' {
  return status < 400 ? 'ok' : status < 500 ? 'refused' : 'error';
}
