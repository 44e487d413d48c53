/**
 * For tests that drive the session layer directly inside a Durable Object: a new object whose
 * storage has the current schema and a session, and options for the SessionStreams under test.
 */
import { runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { createSessionSchema } from '../../src/session/schema.ts';
import { SessionStore } from '../../src/session/session-store.ts';
import type { StreamOptions } from '../../src/session/session-streams.ts';

/** Runs `body` in a new session object (storage is per test file: every call gets its own object). */
export function inNewObject<T>(body: (storage: DurableObjectStorage) => T | Promise<T>): Promise<T> {
  const stub = env.MCP_SESSION.get(env.MCP_SESSION.idFromName(`fixture-${crypto.randomUUID()}`));
  return runInDurableObject(stub, (_instance, state) => {
    state.storage.transactionSync(() => {
      createSessionSchema(state.storage.sql);
      new SessionStore(state.storage.sql).create('2025-11-25', {}, '"initialize"', Date.now(), 1);
    });
    return body(state.storage);
  });
}

/** A 1 MiB connection buffer, bounds out of the way: override what a test is about. */
export function streamOptions(overrides: Partial<StreamOptions> = {}): StreamOptions {
  return {
    connectionBufferBytes: 1024 * 1024,
    retryMs: 1000,
    maxSessionEvents: 1_000_000,
    maxSessionBytes: 1 << 30,
    maxSessionRequests: 1_000_000,
    maxRunningCalls: 1_000,
    keepResident: () => undefined,
    ...overrides,
  };
}
