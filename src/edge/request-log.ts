/** One structured line per request at the edge, readable in `wrangler tail`; never message bodies. */
import { log } from '../core/log.ts';
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
