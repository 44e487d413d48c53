/**
 * The session object's schema (storage/migrator.ts). It is created with the session, and an
 * older one is upgraded when an instance revives the session or runs its alarm; never for an
 * unknown session id, so an object addressed with one never writes anything (a session is
 * never minted lazily).
 *
 * Shaped by what a row written costs (bench/README.md, *What is billed*) and by what it takes
 * on disk (the session's bounds are on what it stores): four tables (a table
 * created is two rows written), no AUTOINCREMENT (its `sqlite_sequence` is a row written per
 * stream) and no secondary index (an entry written per row). A call answered at once writes
 * three rows in all: its request id, its stream, its answer — and nothing later: a stream
 * answered in full is finished by its final event, and the session's storage is dropped whole
 * when the session ends, not row by row.
 */
import { createSchema, upgradeSchema, type Schema } from '../storage/migrator.ts';
import { CREATE_EVENTS, startOf } from './event-key.ts';

export const SESSION_SCHEMA: Schema = {
  version: 4,
  record: { table: 'session', column: 'schema_version' },
  create: [
    `CREATE TABLE session (
       singleton          INTEGER PRIMARY KEY CHECK (singleton = 1),
       schema_version     INTEGER NOT NULL DEFAULT 4,
       protocol_version   TEXT    NOT NULL,
       -- The client's initialize params, replayed into a fresh McpServer after eviction.
       initialize_params  TEXT    NOT NULL,
       -- The initialize request's id key: used in the session like any other request's, and
       -- answered on stream 1, so it needs no row in requests.
       initialize_key     TEXT,
       log_level          TEXT,
       epoch              INTEGER NOT NULL,
       standalone_stream  INTEGER,
       created_at         INTEGER NOT NULL,
       -- The last request that opened no stream; a stream's opened_at records the others.
       last_active_at     INTEGER NOT NULL
     )`,
    // Numbered by the object (the highest + 1): stream rows are never deleted before the whole
    // session is, so no number is handed out twice.
    `CREATE TABLE streams (
       stream          INTEGER PRIMARY KEY,
       epoch           INTEGER NOT NULL,
       kind            TEXT    NOT NULL CHECK (kind IN ('request', 'standalone')),
       -- 'open' until superseded, abandoned or finished by revival. A request stream whose
       -- requests are all answered is finished by its final event (events.ends_stream), with
       -- no write here.
       state           TEXT    NOT NULL CHECK (state IN ('open', 'finished', 'superseded')),
       -- Events with seq <= pruned_through were deleted (the session's bounds); the last seq
       -- is derived from events, so appending an event is one INSERT.
       pruned_through  INTEGER NOT NULL DEFAULT 0,
       opened_at       INTEGER NOT NULL,
       -- JSON array of the request id keys the stream answers (request streams).
       request_keys    TEXT,
       -- The lowest request stream that was still open when this one opened (itself if none):
       -- every stream below the newest row's is finished, so a revival looks no further back.
       open_floor      INTEGER NOT NULL,
       -- At least the session's stored events and their bytes when this stream opened
       -- (SessionBounds): with the newest row's, a new instance learns its totals by reading
       -- the streams from open_floor on, not every event. NULL where unknown (upgraded rows).
       stored_events   INTEGER,
       stored_bytes    INTEGER,
       -- The session's requests with an id and GET streams so far, this stream's included
       -- (MAX_SESSION_REQUESTS): the newest row's is the session's. NULL in upgraded rows.
       session_requests INTEGER
     )`,
    // Keyed by one integer of stream and seq (event-key.ts): an event takes about its size on disk.
    CREATE_EVENTS('events'),
    // Every client request id used in the session (but initialize's): the spec forbids reuse,
    // and this is how a re-sent request is recognised instead of executed twice. `answered`
    // is set only for an answer that leaves others of its stream unanswered (batches).
    `CREATE TABLE requests (
       request_key  TEXT    PRIMARY KEY,
       stream       INTEGER NOT NULL,
       answered     INTEGER NOT NULL DEFAULT 0
     ) WITHOUT ROWID`,
    // event_parts, for messages longer than one stored value, is created when first needed
    // (EventLog.appendMany).
  ],
  upgrades: {
    // Version 2 created event_parts; it is now created when first needed.
    1: [],
    // Version 2 numbered streams with AUTOINCREMENT, kept an index of requests by stream,
    // ended_at for retention, and its version in schema_migrations. Rows are copied once.
    2: [
      `CREATE TABLE streams_v3 (
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
      // open_floor 0: a revival of the upgraded session reads every stream once, as version 2 did.
      `INSERT INTO streams_v3 (stream, epoch, kind, state, pruned_through, opened_at, request_keys, open_floor)
         SELECT s.stream, s.epoch, s.kind, s.state, s.pruned_through, 0,
                CASE s.kind WHEN 'request' THEN (SELECT json_group_array(r.request_key) FROM requests r WHERE r.stream = s.stream) END,
                0
           FROM streams s`,
      `DROP TABLE streams`,
      `ALTER TABLE streams_v3 RENAME TO streams`,
      `DROP INDEX requests_by_stream`,
      `ALTER TABLE events ADD COLUMN ends_stream INTEGER NOT NULL DEFAULT 0`,
      `ALTER TABLE session ADD COLUMN schema_version INTEGER NOT NULL DEFAULT 3`,
      `ALTER TABLE session ADD COLUMN initialize_key TEXT`,
      `DROP TABLE schema_migrations`,
    ],
    // Version 3 did not count the session's requests (MAX_SESSION_REQUESTS), and kept events
    // WITHOUT ROWID, where an event over ~1 KB took a 4 KB page more: rows copied once.
    3: [
      `ALTER TABLE streams ADD COLUMN session_requests INTEGER`,
      CREATE_EVENTS('events_v4'),
      `INSERT INTO events_v4 (event, message, ends_stream) SELECT ${startOf('stream')} | seq, message, ends_stream FROM events`,
      `DROP TABLE events`,
      `ALTER TABLE events_v4 RENAME TO events`,
    ],
  },
};

/** Creates the session's tables. Call inside `storage.transactionSync`, for a new session. */
export const createSessionSchema = (sql: SqlStorage): void => createSchema(sql, SESSION_SCHEMA);

/**
 * Brings a session stored by an older version of this code to the current schema, in its own
 * transaction. Only for a session that exists: an object addressed with an unknown id never
 * writes anything.
 */
export const upgradeSession = (storage: DurableObjectStorage): void =>
  storage.transactionSync(() => upgradeSchema(storage.sql, SESSION_SCHEMA));
