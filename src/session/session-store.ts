/**
 * The session record: negotiated version, the handshake to replay, epoch, and which
 * standalone stream is current. One row, in the object's SQLite storage.
 */
import type { ProtocolVersion } from '../core/protocol-version.ts';
import { schemaExists } from '../storage/migrator.ts';

export interface SessionRecord {
  readonly protocolVersion: ProtocolVersion;
  readonly initializeParams: Record<string, unknown>;
  readonly logLevel: string | null;
  readonly epoch: number;
  readonly standaloneStream: number | null;
  /** When the session last received a request (ms since epoch). */
  readonly lastActiveAt: number;
}

type Row = {
  protocol_version: string;
  initialize_params: string;
  log_level: string | null;
  epoch: number;
  standalone_stream: number | null;
  last_active_at: number;
};

export class SessionStore {
  readonly #sql: SqlStorage;

  constructor(sql: SqlStorage) {
    this.#sql = sql;
  }

  /** Reads without writing: an unknown session leaves no trace in storage. */
  load(): SessionRecord | undefined {
    if (!schemaExists(this.#sql)) return undefined;
    const row = this.#sql.exec<Row>(`SELECT * FROM session`).toArray()[0];
    if (row === undefined) return undefined;
    return {
      protocolVersion: row.protocol_version as ProtocolVersion,
      initializeParams: JSON.parse(row.initialize_params) as Record<string, unknown>,
      logLevel: row.log_level,
      epoch: row.epoch,
      standaloneStream: row.standalone_stream,
      lastActiveAt: row.last_active_at,
    };
  }

  /** The current epoch, or undefined when there is no session (reads without writing). */
  epoch(): number | undefined {
    if (!schemaExists(this.#sql)) return undefined;
    return this.#sql.exec<{ epoch: number }>(`SELECT epoch FROM session`).toArray()[0]?.epoch;
  }

  create(protocolVersion: ProtocolVersion, initializeParams: Record<string, unknown>, now: number): SessionRecord {
    this.#sql.exec(
      `INSERT INTO session (singleton, protocol_version, initialize_params, epoch, created_at, last_active_at)
       VALUES (1, ?, ?, 1, ?, ?)`,
      protocolVersion,
      JSON.stringify(initializeParams),
      now,
      now,
    );
    return { protocolVersion, initializeParams, logLevel: null, epoch: 1, standaloneStream: null, lastActiveAt: now };
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
