/**
 * The session record: negotiated version, the handshake to replay, epoch, and which
 * standalone stream is current. One row, in the object's SQLite storage.
 */
import type { ProtocolVersion } from '../core/protocol-version.ts';
import { tableExists } from '../storage/migrator.ts';

export interface SessionRecord {
  readonly protocolVersion: ProtocolVersion;
  readonly initializeParams: Record<string, unknown>;
  readonly logLevel: string | null;
  readonly epoch: number;
  readonly standaloneStream: number | null;
  /**
   * The key of the initialize request's id (jsonrpc.ts idKey), answered on stream 1; null for
   * a session stored before it was kept here, whose initialize id is in the requests table.
   */
  readonly initializeKey: string | null;
  /**
   * When the session last received a request (ms since epoch): the newest stream's opening or
   * the last request that opened none, whichever is later (SessionClock.touch).
   */
  readonly lastActiveAt: number;
}

type Row = {
  protocol_version: string;
  initialize_params: string;
  log_level: string | null;
  epoch: number;
  standalone_stream: number | null;
  initialize_key: string | null;
  last_active_at: number;
};

/** The session row, its activity including the newest stream's opening: one more row read. */
const SELECT_SESSION = `SELECT protocol_version, initialize_params, initialize_key, log_level, epoch, standalone_stream,
                                max(last_active_at, coalesce((SELECT opened_at FROM streams ORDER BY stream DESC LIMIT 1), 0)) AS last_active_at
                           FROM session`;

export class SessionStore {
  readonly #sql: SqlStorage;

  constructor(sql: SqlStorage) {
    this.#sql = sql;
  }

  /** Whether a session is stored here (of any schema version). Reads only. */
  exists(): boolean {
    return tableExists(this.#sql, 'session');
  }

  /** Reads without writing: an unknown session leaves no trace in storage. Current schema only. */
  load(): SessionRecord | undefined {
    if (!this.exists()) return undefined;
    const row = this.#sql.exec<Row>(SELECT_SESSION).toArray()[0];
    if (row === undefined) return undefined;
    return {
      protocolVersion: row.protocol_version as ProtocolVersion,
      initializeParams: JSON.parse(row.initialize_params) as Record<string, unknown>,
      logLevel: row.log_level,
      epoch: row.epoch,
      standaloneStream: row.standalone_stream,
      initializeKey: row.initialize_key,
      lastActiveAt: row.last_active_at,
    };
  }

  /** The current epoch, or undefined when there is no session (reads without writing). */
  epoch(): number | undefined {
    if (!this.exists()) return undefined;
    return this.#sql.exec<{ epoch: number }>(`SELECT epoch FROM session`).toArray()[0]?.epoch;
  }

  /** A new session, in its first epoch (core/event-id.ts `firstEpoch`). */
  create(
    protocolVersion: ProtocolVersion,
    initializeParams: Record<string, unknown>,
    initializeKey: string,
    now: number,
    epoch: number,
  ): SessionRecord {
    this.#sql.exec(
      `INSERT INTO session (singleton, protocol_version, initialize_params, initialize_key, epoch, created_at, last_active_at)
       VALUES (1, ?, ?, ?, ?, ?, ?)`,
      protocolVersion,
      JSON.stringify(initializeParams),
      initializeKey,
      epoch,
      now,
      now,
    );
    return { protocolVersion, initializeParams, logLevel: null, epoch, standaloneStream: null, initializeKey, lastActiveAt: now };
  }

  advanceEpoch(): number {
    return this.#sql.exec<{ epoch: number }>(`UPDATE session SET epoch = epoch + 1 RETURNING epoch`).one().epoch;
  }

  setLogLevel(level: string): void {
    this.#sql.exec(`UPDATE session SET log_level = ?`, level);
  }

  setStandaloneStream(stream: number): void {
    this.#sql.exec(`UPDATE session SET standalone_stream = ?`, stream);
  }

  touch(now: number): void {
    this.#sql.exec(`UPDATE session SET last_active_at = ?`, now);
  }
}
