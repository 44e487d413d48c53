/**
 * The per-session event bounds count exactly what is stored: across instances, after
 * retention pruning, and in UTF-8 bytes (as SQLite measures them), whatever the characters.
 */
import { runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { migrate } from '../../src/session/migrations.ts';
import { SessionStore } from '../../src/session/session-store.ts';
import { SessionStreams } from '../../src/session/session-streams.ts';

const stored = (sql: SqlStorage) =>
  sql.exec<{ events: number; bytes: number }>(`SELECT count(*) AS events, coalesce(sum(length(CAST(message AS BLOB))), 0) AS bytes FROM events`).one();

function fresh(storage: DurableObjectStorage, bounds: { events?: number; bytes?: number } = {}) {
  return new SessionStreams(storage, new SessionStore(storage.sql), {
    heartbeatMs: 0,
    retryMs: 0,
    maxConnectionAgeMs: 0,
    maxSessionEvents: bounds.events ?? 1_000,
    maxSessionBytes: bounds.bytes ?? 1 << 30,
    onStreamEnded: () => undefined,
  });
}

async function inNewObject<T>(body: (storage: DurableObjectStorage) => T): Promise<T> {
  const stub = env.MCP_SESSION.get(env.MCP_SESSION.idFromName(`bounds-${crypto.randomUUID()}`));
  return runInDurableObject(stub, (_i, state) => {
    state.storage.transactionSync(() => {
      migrate(state.storage.sql);
      new SessionStore(state.storage.sql).create('2025-11-25', {}, 0);
    });
    return body(state.storage);
  });
}

describe('per-session bounds', () => {
  it('keep exactly MAX_SESSION_EVENTS events, counting the first write of an instance once', async () => {
    const count = await inNewObject((storage) => {
      const streams = fresh(storage, { events: 3 });
      const { stream } = streams.openRequestStream(1, ['1']);
      for (let i = 0; i < 6; i++) streams.emit(stream, `{"n":${i}}`);
      return stored(storage.sql).events;
    });
    expect(count).toBe(3);
  });

  it('stay exact when a new instance starts by pruning ended streams', async () => {
    const count = await inNewObject((storage) => {
      const first = fresh(storage, { events: 5 });
      const ended = first.openRequestStream(1, ['1']).stream;
      for (let i = 0; i < 3; i++) first.emit(ended, `{"n":${i}}`);
      first.emit(ended, '{"id":1,"result":{}}', '1');
      const running = first.openRequestStream(1, ['2']).stream;
      first.emit(running, '{"r":0}');

      const second = fresh(storage, { events: 5 }); // a new instance over the same storage
      second.pruneEnded(Date.now() + 1);
      for (let i = 1; i <= 6; i++) second.emit(running, `{"r":${i}}`);
      return stored(storage.sql).events;
    });
    expect(count).toBe(5);
  });

  it('measure bytes as SQLite does, so multi-byte text is neither over- nor under-pruned', async () => {
    const result = await inNewObject((storage) => {
      const message = JSON.stringify({ text: '🙂é'.repeat(50) }); // 4 + 2 bytes per pair
      const streams = fresh(storage, { bytes: 3 * new TextEncoder().encode(message).length });
      const { stream } = streams.openRequestStream(1, ['1']);
      for (let i = 0; i < 5; i++) streams.emit(stream, message);
      return { stored: stored(storage.sql), size: new TextEncoder().encode(message).length };
    });
    expect(result.stored.events).toBe(3);
    expect(result.stored.bytes).toBe(3 * result.size);
  });
});
