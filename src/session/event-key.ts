/**
 * The events table's key: one integer, `(stream << 40) | seq`, so the table is SQLite's rowid
 * b-tree. A `WITHOUT ROWID` table keyed (stream, seq) keeps at most ~1,000 bytes of a row in
 * its page and spills the rest into a 4 KB overflow page of its own: measured in workerd, an
 * event of 1.1–4.2 KB took 4.7 KB on disk that way, 1.4–4.6 KB in a rowid table, and no
 * secondary index is needed (an index entry is a row written per event). `stream` and `seq`
 * are virtual columns derived from the key, for reading; every range the code asks for is a
 * range of the key, so SQLite seeks it.
 *
 * The SQL fragments below take their numbers as bound parameters, in the order written.
 */
import { MAX_SESSION_REQUESTS_LIMIT } from '../config.ts';

/** Bits of the key that hold the seq. */
const SEQ_BITS = 40;

/** The highest seq a stream can hold (2^40 - 1: at a million events a second, 12 days of one stream). */
export const MAX_SEQ = 2 ** SEQ_BITS - 1;

/**
 * The highest stream number a session can have: the key stays a 64-bit integer. Every stream
 * is at least one request, so MAX_SESSION_REQUESTS (at most this) keeps a session within it.
 */
export const MAX_STREAM = MAX_SESSION_REQUESTS_LIMIT;

/** The key of event (stream, seq): two parameters. */
export const EVENT_KEY = `((? << ${SEQ_BITS}) | ?)`;

/** The first key of a stream: one parameter, the stream. */
export const STREAM_START = `(? << ${SEQ_BITS})`;

/**
 * The last key a stream can have: one parameter, the stream. (The first key after it would
 * overflow a 64-bit integer for MAX_STREAM.)
 */
export const STREAM_LAST = `((? << ${SEQ_BITS}) | ${MAX_SEQ})`;

/** The same bounds for a stream named by a column (`column` is SQL, never client input). */
export const startOf = (column: string) => `(${column} << ${SEQ_BITS})`;
export const lastOf = (column: string) => `((${column} << ${SEQ_BITS}) | ${MAX_SEQ})`;

/** The events table, as schema version 4 creates it. */
export const CREATE_EVENTS = (table: string) => `CREATE TABLE ${table} (
       event        INTEGER PRIMARY KEY,
       message      TEXT    NOT NULL,
       -- 1 on the answer that leaves none of the stream's requests unanswered.
       ends_stream  INTEGER NOT NULL DEFAULT 0,
       stream       INTEGER GENERATED ALWAYS AS (event >> ${SEQ_BITS}) VIRTUAL,
       seq          INTEGER GENERATED ALWAYS AS (event & ${MAX_SEQ}) VIRTUAL
     )`;
