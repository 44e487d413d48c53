/**
 * The relay: how an SSE connection's events travel from a session object to the Worker that
 * holds the client's response. The Worker holds the SSE response (its heartbeats, its age
 * limit, its buffer); the object holds one hibernatable WebSocket per connection and sends
 * it SSE frames, exactly the bytes the client is to receive, in order. So an object whose
 * connections are all idle runs nothing and has no request in flight, and the platform may
 * hibernate it with its sockets open.
 *
 * Frames travel as binary messages, so the Worker passes them on without decoding them.
 * Flow control is by credit, in UTF-8 bytes of frames: the object never has more than the
 * connection's buffer sent and unacknowledged (plus one message), and the Worker
 * acknowledges, cumulatively, what its client has taken. A client that reads slower than
 * events come therefore holds at most the buffer in the Worker; the rest waits in the
 * object's log until the client makes room.
 *
 * Pure: message formats and the attachment each socket carries through hibernation.
 */

/** Worker → object: `ack <n>`, the bytes of frames the client has taken so far, cumulatively. */
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
 * Attachments hold at most 2,048 bytes; this one holds numbers and flags.
 */
export interface RelayAttachment {
  readonly stream: number;
  readonly epoch: number;
  /** The last event written to the connection. */
  readonly position: number;
  /** Bytes sent to the Worker, and bytes it acknowledged. */
  readonly sent: number;
  readonly acked: number;
  /** The log holds events after `position` that the connection skipped: it reads them as room allows. */
  readonly behind: boolean;
  /** The stream has ended: the connection closes once caught up. */
  readonly finishing: boolean;
  /** Orders attachments of one stream: the newest one is live, older ones were fenced. */
  readonly attachedAt: number;
}

const NUMBER_FIELDS = ['stream', 'epoch', 'position', 'sent', 'acked', 'attachedAt'] as const;

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
  return v as unknown as RelayAttachment;
}
