/**
 * What the edge records of each request: one structured line, readable in `wrangler tail`, and
 * its metrics point (core/metrics.ts); never message bodies.
 */
import { eraOfHeader } from '../core/era.ts';
import { log } from '../core/log.ts';
import { type MetricEra, type MetricEvent, metricMethod } from '../core/metrics.ts';
import { HEADERS } from '../core/wire.ts';

export function logRequest(request: Request, response: Response, started: number): void {
  const session = response.headers.get(HEADERS.sessionId) ?? request.headers.get(HEADERS.sessionId);
  log({
    msg: 'mcp.request',
    method: request.method,
    // A prefix identifies the session in logs without making logs a session-id store.
    session: session?.slice(0, 8) ?? null,
    stream: numberOrNull(response.headers.get(HEADERS.streamId)),
    resumed: response.headers.get(HEADERS.resumed) ?? null,
    epoch: numberOrNull(response.headers.get(HEADERS.epoch)),
    status: response.status,
    duration_ms: Date.now() - started,
  });
}

const numberOrNull = (value: string | null) => (value === null ? null : Number(value));

/**
 * The request's `request` point: the MCP method its `Mcp-Method` names, else its HTTP method —
 * `other` for a value that is neither (both headers are the client's to write, at any length).
 */
export function requestMetric(request: Request, response: Response, started: number): MetricEvent {
  const declared = Number(request.headers.get('Content-Length'));
  return {
    kind: 'request',
    era: metricEra(request.headers),
    method: metricMethod(request.headers.get(HEADERS.method), request.method),
    status: response.status,
    durationMs: Date.now() - started,
    bytes: Number.isFinite(declared) ? declared : 0,
  };
}

/** A request of 2026-07-28 (its MCP-Protocol-Version says so), or of the sessionful era. */
export const metricEra = (headers: Headers): MetricEra =>
  eraOfHeader(headers.get(HEADERS.protocolVersion)) === 'modern' ? 'modern' : 'legacy';
