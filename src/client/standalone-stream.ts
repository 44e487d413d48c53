/**
 * The session's standalone stream (`GET`), as ForkSafeTransport (transport.ts) keeps it: opened
 * once the session is initialized (or at once, for a session the transport was given), followed
 * by a StreamFollower like any request's stream, replaced when a request's resume is answered
 * with a newer one, and, should its reconnects run out, let go of and taken up again where it
 * was at the server's next answer to any request, so listening does not end for good.
 *
 * Apart from the transport, which sends the requests and keeps the session (its id, mode and
 * epoch, its loss): this stream is the one the client keeps open on its own, owing no answer,
 * and what to do when it stops is its own. The transport tells it when to listen (`listen`),
 * that the server answered (`answered`), and that the session is over (`leave`) or the transport
 * closed (`forget`).
 */
import { formatPosition, isLaterStream, type Position } from './continuation.ts';
import { ReconnectExhaustedError, SessionLostError } from './errors.ts';
import { StreamFollower, type FollowerHost } from './stream-follower.ts';

export class StandaloneStream {
  readonly #host: FollowerHost;
  /** The transport's followers: this stream's among them while it runs, so a lost session counts its requests too. */
  readonly #followers: Set<StreamFollower>;
  /** ForkSafeTransportOptions' switch: `standaloneStream: false` never listens. */
  readonly #options: { readonly standaloneStream?: boolean };
  /** The session's id, read at each `listen`: undefined, no session to listen on. */
  readonly #sessionId: () => string | undefined;
  #follower: StreamFollower | undefined;
  /** The standalone stream ran out of reconnect attempts here (its cursor): reopened there at the server's next answer. */
  #gaveUp: { readonly cursor: string | undefined } | undefined;

  constructor(
    host: FollowerHost,
    followers: Set<StreamFollower>,
    options: { readonly standaloneStream?: boolean },
    sessionId: () => string | undefined,
  ) {
    this.#host = host;
    this.#followers = followers;
    this.#options = options;
    this.#sessionId = sessionId;
  }

  /**
   * Opens the standalone stream, unless it is open, switched off, or there is no session. With
   * `from`, the server replaced it with a new one (a request's resume was answered so): the old
   * one's connection gets nothing more, so it is left, and the new one followed from its start.
   */
  listen(from?: Position, resume?: string): void {
    this.#gaveUp = undefined;
    if (this.#options.standaloneStream === false || this.#sessionId() === undefined) return;
    const current = this.#follower;
    if (current !== undefined) {
      // Two replacements may be handled out of order: only a later stream than the one followed counts.
      if (from === undefined || (current.position !== undefined && !isLaterStream(from, current.position))) return;
      current.stop();
    }
    const follower = new StreamFollower(this.#host, undefined, resume ?? (from && formatPosition(from)));
    this.#follower = follower;
    this.#followers.add(follower);
    follower
      .run()
      .catch((error: unknown) => {
        // Out of attempts (the network, say, was down): reported, and taken up again where it
        // was at the next answer from the server (answered), so listening does not end for good.
        if (error instanceof ReconnectExhaustedError && this.#follower === follower) {
          // Let go of it now, not a microtask later (finally): an answer observed in between must find none to keep.
          this.#follower = undefined;
          this.#followers.delete(follower);
          this.#gaveUp = { cursor: error.cursor };
        }
        if (!(error instanceof SessionLostError)) this.#host.report(error instanceof Error ? error : new Error(String(error)));
      })
      .finally(() => {
        this.#followers.delete(follower);
        if (this.#follower === follower) this.#follower = undefined;
      });
  }

  /** The server answered a request (not an `initialize`): a stream that gave up is taken up again where it was. */
  answered(): void {
    if (this.#gaveUp !== undefined) this.listen(undefined, this.#gaveUp.cursor);
  }

  /** The session is over: no stream is followed, and none is to be taken up again. */
  leave(): void {
    this.#follower = undefined;
    this.#gaveUp = undefined;
  }

  /** The transport closed: the stream followed is let go of (the session's abort stops it). */
  forget(): void {
    this.#follower = undefined;
  }
}
