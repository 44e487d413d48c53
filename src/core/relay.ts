/**
 * The relay: how an SSE connection's events travel from a session object to the Worker that
 * holds the client's response. The Worker holds the SSE response (its heartbeats, its age
 * limit, its buffer). The object's first answer carries the connection for its first moments
 * (the bridge: most calls end within them, and never need more); a connection still open after
 * BRIDGE_MS moves to one hibernatable WebSocket, on which the object sends SSE frames, exactly
 * the bytes the client is to receive, in order. So an object whose connections are all idle
 * runs nothing and has no request in flight, and the platform may hibernate it with its
 * sockets open.
 *
 * Frames travel as binary messages, so the Worker passes them on without decoding them.
 * Flow control is by credit, in UTF-8 bytes of frames: the object never has more than the
 * connection's buffer sent and not taken (plus one message). On the bridge, taken is what the
 * runtime read from it (session/relay-sink.ts); on the socket, what the Worker acknowledges
 * its client took: its first ack says the whole first answer is through, and counts the
 * socket's bytes taken; later ones count them cumulatively. A client that reads slower than
 * events come therefore holds at most the buffer in the Worker; the rest waits in the
 * object's log until the client makes room.
 *
 * Pure: message formats and the attachment each socket carries through hibernation.
 */

/**
 * How long the first answer alone carries a connection. Long enough for most calls to end on
 * it (they then cost no socket at all, and their first events no relay hop: W3's first
 * progress event took +0.3 ms when the socket was opened at once), short against the ~10 s an
 * object idles before it hibernates.
 */
export const BRIDGE_MS = 200;

/** Worker → object: `ack <n>`: the first answer is taken, and `n` bytes of the socket's frames, cumulatively. */
const ACK = /^ack (0|[1-9][0-9]{0,15})$/;

export const encodeAck = (consumedBytes: number): string => `ack ${consumedBytes}`;

/** The acknowledged byte count, or undefined for anything that is not an ack. */
export function parseAck(message: string | ArrayBuffer): number | undefined {
  if (typeof message !== 'string') return undefined;
  const match = ACK.exec(message);
  if (match === null) return undefined;
  const bytes = Number(match[1]);
  return Number.isSafeInteger(bytes) ? bytes : undefined;
}

/** The object's end of a relay WebSocket: only what its connection uses. */
export interface RelaySocket {
  /** SSE frames, as UTF-8 bytes. */
  send(message: Uint8Array): void;
  close(code?: number, reason?: string): void;
  serializeAttachment(value: unknown): void;
}

/** Why the object ends a relay socket (the close reason; the code is always RELAY_CLOSE_CODE). */
export type RelayEnd = 'stream-finished' | 'connection-closed';

export const RELAY_CLOSE_CODE = 1000;

/**
 * What a relay socket remembers of its connection while the object hibernates: enough to
 * rebuild the connection exactly where it was (ctx.getWebSockets() + deserializeAttachment).
 * Attachments hold at most 2,048 bytes; this one holds numbers and flags, and at most
 * MAX_CLOSING_CHARS of a closing frame.
 */
export interface RelayAttachment {
  readonly stream: number;
  readonly epoch: number;
  /** The last event written to the connection. */
  readonly position: number;
  /** Bytes of the first answer counted as not taken until the Worker's first ack (0 since the bridge counts what the runtime read; kept for sockets recorded before). */
  readonly bridge: number;
  /** Bytes sent on the socket, and bytes of them the Worker acknowledged. */
  readonly sent: number;
  readonly acked: number;
  /** The log holds events after `position` that the connection skipped: it reads them as room allows. */
  readonly behind: boolean;
  /** The stream has ended: the connection closes once caught up. */
  readonly finishing: boolean;
  /** Orders attachments of one stream: the newest one is live, older ones were fenced. */
  readonly attachedAt: number;
  /**
   * A frame of the connection's own, written once its stream has finished and it has caught
   * up, before it closes: the answer to the request that opened it, when that answer is not
   * one of the stream's events (a task's `tasks/stream`, whose result ends the stream).
   */
  readonly closing?: string;
}

/** The largest closing frame an attachment carries (UTF-16 units, a bound on its bytes' share of 2,048 too). */
export const MAX_CLOSING_CHARS = 1024;

const NUMBER_FIELDS = ['stream', 'epoch', 'position', 'bridge', 'sent', 'acked', 'attachedAt'] as const;

/** A socket's attachment if it is one this code wrote, else undefined (close such a socket). */
export function parseAttachment(value: unknown): RelayAttachment | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const v = value as Record<string, unknown>;
  for (const field of NUMBER_FIELDS) {
    const n = v[field];
    if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0) return undefined;
  }
  if (typeof v.behind !== 'boolean' || typeof v.finishing !== 'boolean') return undefined;
  if ((v.acked as number) > (v.sent as number)) return undefined;
  if (v.closing !== undefined && (typeof v.closing !== 'string' || v.closing.length > MAX_CLOSING_CHARS)) return undefined;
  return v as unknown as RelayAttachment;
}
