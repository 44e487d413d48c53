/**
 * The session object's schema, as numbered migrations (storage/migrator.ts). They run when a
 * session is created, and when an instance revives a session or runs its alarm for a session
 * stored by an older version; never for an unknown session id, so an object addressed with
 * one never writes anything (a session is never minted lazily).
 */
import { migrate, type Migration } from '../storage/migrator.ts';

export const SESSION_MIGRATIONS: readonly Migration[] = [
  {
    id: 1,
    statements: [
      `CREATE TABLE session (
         singleton          INTEGER PRIMARY KEY CHECK (singleton = 1),
         protocol_version   TEXT    NOT NULL,
         -- The client's initialize params, replayed into a fresh McpServer after eviction.
         initialize_params  TEXT    NOT NULL,
         log_level          TEXT,
         epoch              INTEGER NOT NULL,
         standalone_stream  INTEGER,
         created_at         INTEGER NOT NULL,
         last_active_at     INTEGER NOT NULL
       )`,
      // AUTOINCREMENT: SQLite never hands out a stream number twice, even after deletes.
      `CREATE TABLE streams (
         stream          INTEGER PRIMARY KEY AUTOINCREMENT,
         epoch           INTEGER NOT NULL,
         kind            TEXT    NOT NULL CHECK (kind IN ('request', 'standalone')),
         state           TEXT    NOT NULL CHECK (state IN ('open', 'finished', 'superseded')),
         -- Events with seq <= pruned_through were deleted; the last seq is derived from
         -- events, so appending an event is one INSERT.
         pruned_through  INTEGER NOT NULL DEFAULT 0,
         ended_at        INTEGER
       )`,
      `CREATE TABLE events (
         stream   INTEGER NOT NULL,
         seq      INTEGER NOT NULL,
         message  TEXT    NOT NULL,
         PRIMARY KEY (stream, seq)
       ) WITHOUT ROWID`,
      // Every client request id ever used in the session: the spec forbids reuse, and this
      // is how a re-sent request is recognised instead of executed twice.
      `CREATE TABLE requests (
         request_key  TEXT    PRIMARY KEY,
         stream       INTEGER NOT NULL,
         answered     INTEGER NOT NULL DEFAULT 0
       ) WITHOUT ROWID`,
      `CREATE INDEX requests_by_stream ON requests (stream)`,
    ],
  },
  {
    id: 2,
    statements: [
      // A message longer than one SQLite value may be (2 MB in a Durable Object) is stored in
      // parts: its events row holds the first, this table the rest, numbered from 1.
      `CREATE TABLE event_parts (
         stream  INTEGER NOT NULL,
         seq     INTEGER NOT NULL,
         part    INTEGER NOT NULL,
         chunk   TEXT    NOT NULL,
         PRIMARY KEY (stream, seq, part)
       ) WITHOUT ROWID`,
    ],
  },
];

/** Brings the session's tables up to date. Call inside `storage.transactionSync`. */
export const migrateSession = (sql: SqlStorage): void => migrate(sql, SESSION_MIGRATIONS);

/**
 * Brings a session stored by an older version of this code to the current schema, in its own
 * transaction. Only for a session that exists: an object addressed with an unknown id never
 * writes anything.
 */
export const upgradeSession = (storage: DurableObjectStorage): void => storage.transactionSync(() => migrateSession(storage.sql));
