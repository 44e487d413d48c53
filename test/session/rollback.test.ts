/**
 * SessionStreams keeps what it believes of the streams (open or not, last seq, unanswered
 * requests, totals) in memory, and updates it inside the transactions that change storage.
 * When such a transaction rolls back (a full disk, a failed write), the belief must roll back
 * with it: otherwise the object serves a stream as ended that storage still has open, or
 * finishes a call whose other requests were never answered.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { EventLog } from '../../src/session/event-log.ts';
import { RequestIds } from '../../src/session/request-ids.ts';
import { SessionStore } from '../../src/session/session-store.ts';
import { SessionStreams } from '../../src/session/session-streams.ts';
import { inNewObject as inObject, streamOptions } from '../support/session-fixture.ts';

const originalSetAnswered = RequestIds.prototype.setAnswered;
const originalAppendMany = EventLog.prototype.appendMany;
afterEach(() => {
  RequestIds.prototype.setAnswered = originalSetAnswered;
  EventLog.prototype.appendMany = originalAppendMany;
});

/** A session store whose next standalone-stream write fails, as a full disk would. */
class FailingStore extends SessionStore {
  failNext = false;
  override setStandaloneStream(stream: number): void {
    if (this.failNext) {
      this.failNext = false;
      throw new Error('SQLITE_FULL (injected)');
    }
    super.setStandaloneStream(stream);
  }
}

function inNewObject<T>(body: (streams: SessionStreams, store: FailingStore, sql: SqlStorage) => T): Promise<T> {
  return inObject((storage) => {
    const store = new FailingStore(storage.sql);
    return body(new SessionStreams(storage, store, streamOptions({ maxSessionEvents: 1_000 })), store, storage.sql);
  });
}

/** Makes `target[method]`'s next call throw, as a full disk would, then puts it back. */
function failOnce<T extends object>(target: T, method: keyof T & string): void {
  const original = target[method];
  (target as Record<string, unknown>)[method] = () => {
    (target as Record<string, unknown>)[method] = original;
    throw new Error('SQLITE_FULL (injected)');
  };
}

/** Emits the answer to request `id` on `stream`: whether the emit threw. */
function emitThrows(streams: SessionStreams, stream: number, id: string): boolean {
  try {
    streams.emit(stream, `{"jsonrpc":"2.0","id":"${id}","result":{}}`, `"${id}"`);
    return false;
  } catch {
    return true;
  }
}

/** The stream's state as storage has it: its row, and its last event (EventLog.stream reads SQL). */
const stateOf = (streams: SessionStreams, stream: number) => streams.log.stream(stream)!.state;

describe('a transaction that rolls back', () => {
  it('opening a standalone stream: the one it would have superseded is still open, and takes events', async () => {
    const result = await inNewObject((streams, store) => {
      const { stream: first } = streams.openStandalone(1, null);
      store.failNext = true;
      let threw = false;
      try {
        streams.openStandalone(1, first);
      } catch {
        threw = true;
      }
      return {
        threw,
        stored: stateOf(streams, first),
        open: streams.isOpen(first),
        emitted: streams.emit(first, '{"jsonrpc":"2.0","method":"n"}'),
      };
    });
    expect(result).toEqual({ threw: true, stored: 'open', open: true, emitted: true });
  });

  it('storing an answer of a batch: the stream waits for that request still, and its other answer does not finish it', async () => {
    const result = await inNewObject((streams) => {
      const { stream } = streams.openRequestStream(1, ['"x"', '"y"']);
      failOnce(RequestIds.prototype, 'setAnswered');
      const threw = emitThrows(streams, stream, 'x');
      streams.emit(stream, '{"jsonrpc":"2.0","id":"y","result":{}}', '"y"');
      const afterY = { stored: stateOf(streams, stream), open: streams.isOpen(stream) };
      const retried = streams.emit(stream, '{"jsonrpc":"2.0","id":"x","result":{}}', '"x"');
      return {
        threw,
        afterY,
        retried,
        end: stateOf(streams, stream),
        events: streams.log.eventsAfter(stream, 0, 1 << 20).map((e) => JSON.parse(e.message).id),
      };
    });
    expect(result).toEqual({ threw: true, afterY: { stored: 'open', open: true }, retried: true, end: 'finished', events: ['y', 'x'] });
  });
});

describe('a call answered by one INSERT, with no transaction around it', () => {
  it('a failed store leaves its stream open, as storage has it, and the answer stored again finishes it', async () => {
    const result = await inNewObject((streams) => {
      const { stream } = streams.openRequestStream(1, ['"x"']);
      failOnce(EventLog.prototype, 'appendMany');
      const threw = emitThrows(streams, stream, 'x');
      const afterFailure = { stored: stateOf(streams, stream), open: streams.isOpen(stream) };
      const retried = streams.emit(stream, '{"jsonrpc":"2.0","id":"x","result":{}}', '"x"');
      return {
        threw,
        afterFailure,
        retried,
        end: { stored: stateOf(streams, stream), open: streams.isOpen(stream) },
        events: streams.log.eventsAfter(stream, 0, 1 << 20).map((e) => JSON.parse(e.message).id),
      };
    });
    expect(result).toEqual({
      threw: true,
      afterFailure: { stored: 'open', open: true },
      retried: true,
      end: { stored: 'finished', open: false },
      events: ['x'],
    });
  });
});

describe('a server→client request', () => {
  // Notifications after a turn's first are held and stored together when the turn ends; if
  // that store fails, nobody is left to tell. A request's sender waits for its answer, so a
  // request is never held: storing it fails in its sender's `send`.
  it('is stored at once, after what was held, and a failure to store it reaches its sender', async () => {
    const result = await inNewObject((streams, _store, sql) => {
      const rows = () => sql.exec<{ n: number }>(`SELECT count(*) AS n FROM events`).one().n;
      const { stream } = streams.openRequestStream(1, ['"t"']);
      streams.emit(stream, '{"jsonrpc":"2.0","method":"n","params":{"i":1}}'); // the turn's first: stored at once
      streams.emit(stream, '{"jsonrpc":"2.0","method":"n","params":{"i":2}}'); // held
      const beforeRequest = rows();
      streams.emit(stream, '{"jsonrpc":"2.0","id":"tag.0","method":"elicitation/create","params":{}}', undefined, true);
      const afterRequest = rows();
      EventLog.prototype.appendMany = () => {
        throw new Error('SQLITE_FULL (injected)');
      };
      let threw = false;
      try {
        streams.emit(stream, '{"jsonrpc":"2.0","id":"tag.1","method":"elicitation/create","params":{}}', undefined, true);
      } catch {
        threw = true;
      }
      return { beforeRequest, afterRequest, threw };
    });
    expect(result).toEqual({ beforeRequest: 1, afterRequest: 3, threw: true });
  });
});

describe('deleting the session', () => {
  it('drops what is held rather than store it: a store that fails cannot stop the deletion', async () => {
    const result = await inNewObject((streams, _store, sql) => {
      const { stream } = streams.openRequestStream(1, ['"t"']);
      streams.emit(stream, '{"jsonrpc":"2.0","method":"n","params":{"i":1}}'); // stored at once
      streams.emit(stream, '{"jsonrpc":"2.0","method":"n","params":{"i":2}}'); // held
      EventLog.prototype.appendMany = () => {
        throw new Error('SQLITE_FULL (injected)');
      };
      streams.closeAll();
      EventLog.prototype.appendMany = originalAppendMany;
      return sql.exec<{ n: number }>(`SELECT count(*) AS n FROM events`).one().n;
    });
    expect(result).toBe(1);
  });
});
