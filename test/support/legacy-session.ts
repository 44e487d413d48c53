/**
 * A session as version 2 of the schema stored it (the code before commit "fewer rows"), for the
 * tests that prove a stored session survives the upgrade. The statements are that version's,
 * frozen here: the library no longer carries them.
 */
import { idKey } from '../../src/core/jsonrpc.ts';

const V2_SCHEMA = [
  `CREATE TABLE schema_migrations (id INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)`,
  `CREATE TABLE session (
     singleton          INTEGER PRIMARY KEY CHECK (singleton = 1),
     protocol_version   TEXT    NOT NULL,
     initialize_params  TEXT    NOT NULL,
     log_level          TEXT,
     epoch              INTEGER NOT NULL,
     standalone_stream  INTEGER,
     created_at         INTEGER NOT NULL,
     last_active_at     INTEGER NOT NULL
   )`,
  `CREATE TABLE streams (
     stream          INTEGER PRIMARY KEY AUTOINCREMENT,
     epoch           INTEGER NOT NULL,
     kind            TEXT    NOT NULL CHECK (kind IN ('request', 'standalone')),
     state           TEXT    NOT NULL CHECK (state IN ('open', 'finished', 'superseded')),
     pruned_through  INTEGER NOT NULL DEFAULT 0,
     ended_at        INTEGER
   )`,
  `CREATE TABLE events (
     stream   INTEGER NOT NULL,
     seq      INTEGER NOT NULL,
     message  TEXT    NOT NULL,
     PRIMARY KEY (stream, seq)
   ) WITHOUT ROWID`,
  `CREATE TABLE requests (
     request_key  TEXT    PRIMARY KEY,
     stream       INTEGER NOT NULL,
     answered     INTEGER NOT NULL DEFAULT 0
   ) WITHOUT ROWID`,
  `CREATE INDEX requests_by_stream ON requests (stream)`,
  `CREATE TABLE event_parts (
     stream  INTEGER NOT NULL,
     seq     INTEGER NOT NULL,
     part    INTEGER NOT NULL,
     chunk   TEXT    NOT NULL,
     PRIMARY KEY (stream, seq, part)
   ) WITHOUT ROWID`,
];

/** The ids the legacy session's streams answer: 1 initialize, 2 a finished call, 3 a call left running. */
export const LEGACY = { initializeId: 0, finishedId: 'done', runningId: 'running', progressToken: 'p' } as const;

/**
 * Replaces the object's storage with a version-2 session: initialize answered on stream 1, a
 * `tally` call finished on stream 2, a `countdown` still running on stream 3 (its instance
 * gone) after one progress event, and a superseded standalone stream 4 with no events.
 */
export async function writeLegacySession(storage: DurableObjectStorage, protocolVersion = '2025-11-25'): Promise<void> {
  await storage.deleteAll();
  const now = Date.now();
  const initializeParams = { protocolVersion, capabilities: {}, clientInfo: { name: 'test', version: '1.0.0' } };
  storage.transactionSync(() => {
    const sql = storage.sql;
    for (const statement of V2_SCHEMA) sql.exec(statement);
    sql.exec(`INSERT INTO schema_migrations (id, applied_at) VALUES (1, ?), (2, ?)`, now, now);
    sql.exec(
      `INSERT INTO session (singleton, protocol_version, initialize_params, epoch, standalone_stream, created_at, last_active_at)
       VALUES (1, ?, ?, 1, NULL, ?, ?)`,
      protocolVersion,
      JSON.stringify(initializeParams),
      now,
      now,
    );
    sql.exec(
      `INSERT INTO streams (stream, epoch, kind, state, pruned_through, ended_at) VALUES
         (1, 1, 'request', 'finished', 0, ?), (2, 1, 'request', 'finished', 0, ?), (3, 1, 'request', 'open', 0, NULL),
         (4, 1, 'standalone', 'superseded', 0, ?), (5, 1, 'standalone', 'open', 0, NULL)`,
      now,
      now,
      now,
    );
    sql.exec(`UPDATE session SET standalone_stream = 5`);
    sql.exec(
      `INSERT INTO requests (request_key, stream) VALUES (?, 1), (?, 2), (?, 3)`,
      idKey(LEGACY.initializeId),
      idKey(LEGACY.finishedId),
      idKey(LEGACY.runningId),
    );
    const answer = (id: string | number, result: unknown) => JSON.stringify({ result, jsonrpc: '2.0', id });
    sql.exec(
      `INSERT INTO events (stream, seq, message) VALUES (1, 1, ?), (2, 1, ?), (3, 1, ?)`,
      answer(LEGACY.initializeId, { protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'fixture', version: '0' } }),
      answer(LEGACY.finishedId, { content: [{ type: 'text', text: '1' }] }),
      JSON.stringify({
        jsonrpc: '2.0',
        method: 'notifications/progress',
        params: { progressToken: LEGACY.progressToken, progress: 1, total: 3 },
      }),
    );
  });
  await storage.setAlarm(now + 3_600_000); // every session had its expiry armed
}

/** Version 3's statements (the code before the events table was keyed by one integer), frozen. */
const V3_SCHEMA = [
  `CREATE TABLE session (
     singleton          INTEGER PRIMARY KEY CHECK (singleton = 1),
     schema_version     INTEGER NOT NULL DEFAULT 3,
     protocol_version   TEXT    NOT NULL,
     initialize_params  TEXT    NOT NULL,
     initialize_key     TEXT,
     log_level          TEXT,
     epoch              INTEGER NOT NULL,
     standalone_stream  INTEGER,
     created_at         INTEGER NOT NULL,
     last_active_at     INTEGER NOT NULL
   )`,
  `CREATE TABLE streams (
     stream          INTEGER PRIMARY KEY,
     epoch           INTEGER NOT NULL,
     kind            TEXT    NOT NULL CHECK (kind IN ('request', 'standalone')),
     state           TEXT    NOT NULL CHECK (state IN ('open', 'finished', 'superseded')),
     pruned_through  INTEGER NOT NULL DEFAULT 0,
     opened_at       INTEGER NOT NULL,
     request_keys    TEXT,
     open_floor      INTEGER NOT NULL,
     stored_events   INTEGER,
     stored_bytes    INTEGER
   )`,
  `CREATE TABLE events (
     stream       INTEGER NOT NULL,
     seq          INTEGER NOT NULL,
     message      TEXT    NOT NULL,
     ends_stream  INTEGER NOT NULL DEFAULT 0,
     PRIMARY KEY (stream, seq)
   ) WITHOUT ROWID`,
  `CREATE TABLE requests (
     request_key  TEXT    PRIMARY KEY,
     stream       INTEGER NOT NULL,
     answered     INTEGER NOT NULL DEFAULT 0
   ) WITHOUT ROWID`,
];

/** The version-3 session: initialize on stream 1, a finished call with a long answer on 2, a GET stream 3 open. */
export const V3 = { initializeId: 0, finishedId: 'long', answerText: 'a'.repeat(3_000) } as const;

/** Replaces the object's storage with a version-3 session (V3). */
export async function writeV3Session(storage: DurableObjectStorage, protocolVersion = '2025-11-25'): Promise<void> {
  await storage.deleteAll();
  const now = Date.now();
  const initializeParams = { protocolVersion, capabilities: {}, clientInfo: { name: 'test', version: '1.0.0' } };
  const answer = (id: string | number, result: unknown) => JSON.stringify({ result, jsonrpc: '2.0', id });
  storage.transactionSync(() => {
    const sql = storage.sql;
    for (const statement of V3_SCHEMA) sql.exec(statement);
    sql.exec(
      `INSERT INTO session (protocol_version, initialize_params, initialize_key, epoch, standalone_stream, created_at, last_active_at, singleton)
       VALUES (?, ?, ?, 1, 3, ?, ?, 1)`,
      protocolVersion,
      JSON.stringify(initializeParams),
      idKey(V3.initializeId),
      now,
      now,
    );
    sql.exec(
      `INSERT INTO streams (stream, epoch, kind, state, opened_at, request_keys, open_floor, stored_events, stored_bytes) VALUES
         (1, 1, 'request', 'open', ?, ?, 1, 0, 0), (2, 1, 'request', 'open', ?, ?, 2, 1, 100), (3, 1, 'standalone', 'open', ?, NULL, 3, 2, 3200)`,
      now,
      JSON.stringify([idKey(V3.initializeId)]),
      now,
      JSON.stringify([idKey(V3.finishedId)]),
      now,
    );
    sql.exec(`INSERT INTO requests (request_key, stream) VALUES (?, 2)`, idKey(V3.finishedId));
    sql.exec(
      `INSERT INTO events (stream, seq, message, ends_stream) VALUES (1, 1, ?, 1), (2, 1, ?, 1)`,
      answer(V3.initializeId, { protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'fixture', version: '0' } }),
      answer(V3.finishedId, { content: [{ type: 'text', text: V3.answerText }] }),
    );
  });
  await storage.setAlarm(now + 3_600_000);
}
