/**
 * The typed errors of the fork-safe client transport. Each names what the client can no longer
 * vouch for, so a caller can tell "the call's result may be lost" from "the server answered
 * with a stream that is not the one the call was on" without parsing messages.
 *
 * A call that fails with one of these rejects with it (the transport's `send` rejects, and the
 * SDK's `Client` hands that rejection to the caller); the transport's `onerror` sees it too.
 */
import type { ForkReason } from './continuation.ts';

export type RequestId = string | number;

export class ForkSafeTransportError extends Error {
  override readonly name: string = 'ForkSafeTransportError';
}

/**
 * A resumed response is not the continuation of the cursor it answered: another stream, another
 * epoch, a gap or a rewind, or not flagged as resumed. Nothing of it was delivered.
 */
export class ForkDetectedError extends ForkSafeTransportError {
  override readonly name = 'ForkDetectedError';

  constructor(
    readonly reason: ForkReason,
    /** The cursor the client asked to continue from. */
    readonly cursor: string | undefined,
    detail: string,
  ) {
    super(`the server's stream does not continue ${cursor ?? 'the new stream'}: ${detail}`);
  }
}

/**
 * The server refused to continue the stream: `GET` + `Last-Event-ID` answered with a typed
 * refusal (`unknown_stream`, `cursor_ahead`, `stream_superseded`, `events_pruned`,
 * `malformed_cursor`), so what followed the cursor, the result included, is lost.
 */
export class StreamRefusedError extends ForkSafeTransportError {
  override readonly name = 'StreamRefusedError';

  constructor(
    /** `error.data.reason` of the refusal; `undefined` when the server gave none. */
    readonly reason: string | undefined,
    readonly status: number,
    readonly cursor: string,
    message: string,
  ) {
    super(`resuming from ${cursor} was refused (${status} ${reason ?? 'no reason'}): ${message}`);
  }
}

/**
 * The session is gone (404): the listed requests were still waiting for their answers and will
 * get none. Connecting the `Client` again (after `close()`) starts a new session.
 */
export class SessionLostError extends ForkSafeTransportError {
  override readonly name = 'SessionLostError';

  constructor(
    readonly sessionId: string | undefined,
    /** The requests that were waiting for an answer in the lost session. */
    readonly requestIds: readonly RequestId[],
  ) {
    super(
      `session ${sessionId ?? '(none)'} is gone` +
        (requestIds.length > 0 ? `; lost requests: ${requestIds.map((id) => JSON.stringify(id)).join(', ')}` : ''),
    );
  }
}

/** The connection kept breaking without any progress, past the configured number of attempts. */
export class ReconnectExhaustedError extends ForkSafeTransportError {
  override readonly name = 'ReconnectExhaustedError';

  constructor(
    readonly attempts: number,
    /** The last complete event id received, from which a later resume could still be tried. */
    readonly cursor: string | undefined,
    cause?: unknown,
  ) {
    super(`gave up after ${attempts} reconnection attempts without progress (cursor ${cursor ?? 'none'})`, { cause });
  }
}

/**
 * A request whose POST broke before any event, on a server that does not record request ids
 * (no `Mcp-Session-Epoch`): sending it again could run it twice, so it is not re-sent. It may or
 * may not have run.
 */
export class RequestLostError extends ForkSafeTransportError {
  override readonly name = 'RequestLostError';

  constructor(
    readonly requestId: RequestId,
    cause?: unknown,
  ) {
    super(`request ${JSON.stringify(requestId)} was cut before any event, and this server cannot tell a re-send from a new call`, {
      cause,
    });
  }
}

/**
 * The request's stream ended without its answer: the server cancelled the request (another
 * client of the session sent `notifications/cancelled` for it), and a cancelled request gets no
 * response. The tool may have partly run; it is not run again.
 */
export class RequestCancelledError extends ForkSafeTransportError {
  override readonly name = 'RequestCancelledError';

  constructor(
    readonly requestIds: readonly RequestId[],
    /** Where the stream was resumed from (the last event received, or its start): its final event. */
    readonly cursor: string,
  ) {
    super(
      `the stream of request ${requestIds.map((id) => JSON.stringify(id)).join(', ')} ended at ${cursor} without an answer: it was cancelled`,
    );
  }
}

/** An HTTP answer the transport has no way to recover from (a 400, 403, 415, …). */
export class HttpStatusError extends ForkSafeTransportError {
  override readonly name = 'HttpStatusError';

  constructor(
    readonly status: number,
    /** The JSON-RPC error of the body, when it had one. */
    readonly error: { readonly code?: number; readonly message?: string; readonly data?: unknown } | undefined,
    readonly text: string,
  ) {
    super(`the server answered ${status}${error?.message === undefined ? '' : `: ${error.message}`}`);
  }
}
