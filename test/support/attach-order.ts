/**
 * For race tests: the order in which session objects attach connections to streams, stamped on
 * each SSE answer — `X-Race-Attach`, a counter of attachments in this isolate, and
 * `X-Race-Last-Seq`, the stream's last stored event at that moment, where the connection the
 * attachment fences must stop. It records and stamps, nothing else: it wraps
 * ConnectionTable's `open` and `attach` and RelayEndpoint's `answer` (the way rollback.test.ts
 * injects failures). Used by test/session/attach-race.test.ts, and by scripts/faults/race.mjs through
 * test/fixture-server/race-entry.ts.
 */
import type { StreamRecord } from '../../src/core/resume.ts';
import { ConnectionTable } from '../../src/session/connection-table.ts';
import type { Connection } from '../../src/session/connection.ts';
import { RelayEndpoint } from '../../src/session/relay-endpoint.ts';
import type { RelayConnection } from '../../src/session/relay-connection.ts';

export const ATTACH_HEADER = 'X-Race-Attach';
export const LAST_SEQ_HEADER = 'X-Race-Last-Seq';

/** Starts stamping answers; returns what stops it. */
export function stampAttachOrder(): () => void {
  const original = {
    open: ConnectionTable.prototype.open,
    attach: ConnectionTable.prototype.attach,
    answer: RelayEndpoint.prototype.answer,
  };
  const lastSeqAtOpen = new WeakMap<Connection, number>();
  const stamps = new WeakMap<Connection, { order: number; lastSeq: number }>();
  let attachments = 0;
  ConnectionTable.prototype.open = function (this: ConnectionTable, stream: StreamRecord, afterSeq: number, lastSeq: number) {
    const connection = original.open.call(this, stream, afterSeq, lastSeq);
    lastSeqAtOpen.set(connection, lastSeq);
    return connection;
  };
  // Opened and attached in one synchronous step (SessionStreams.attach): the last seq is the one at the switch.
  ConnectionTable.prototype.attach = function (this: ConnectionTable, stream: number, connection: Connection) {
    const lastSeq = lastSeqAtOpen.get(connection);
    if (lastSeq !== undefined) stamps.set(connection, { order: attachments++, lastSeq });
    original.attach.call(this, stream, connection);
  };
  RelayEndpoint.prototype.answer = function (this: RelayEndpoint, connection: RelayConnection, headers: Headers) {
    const stamp = stamps.get(connection);
    if (stamp !== undefined) {
      headers.set(ATTACH_HEADER, String(stamp.order));
      headers.set(LAST_SEQ_HEADER, String(stamp.lastSeq));
    }
    return original.answer.call(this, connection, headers);
  };
  return () => {
    ConnectionTable.prototype.open = original.open;
    ConnectionTable.prototype.attach = original.attach;
    RelayEndpoint.prototype.answer = original.answer;
  };
}
