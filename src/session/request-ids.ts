/**
 * Every client request id used in the session (but initialize's, which the session row
 * keeps), with the stream that answers it: "The request ID MUST NOT have been previously used
 * by the requestor within the same session", so a re-sent id is recognised and refused, never
 * run again. Stored in `requests(request_key, stream, answered)` (schema.ts); a stream answers
 * the ids its row's `request_keys` names. `answered` is written only for an answer (or a
 * cancellation) that leaves others of its stream unanswered (a 2025-03-26 batch).
 *
 * Synchronous SQL, for the caller's transaction (EventLog hands it out as `requests`).
 */
export class RequestIds {
  readonly #sql: SqlStorage;

  constructor(sql: SqlStorage) {
    this.#sql = sql;
  }

  register(requestKey: string, stream: number): void {
    this.#sql.exec(`INSERT INTO requests (request_key, stream) VALUES (?, ?)`, requestKey, stream);
  }

  streamOf(requestKey: string): number | undefined {
    return this.#sql.exec<{ stream: number }>(`SELECT stream FROM requests WHERE request_key = ?`, requestKey).toArray()[0]?.stream;
  }

  setAnswered(requestKey: string): void {
    this.#sql.exec(`UPDATE requests SET answered = 1 WHERE request_key = ?`, requestKey);
  }

  /** Whether requests of `stream` other than `requestKey` still await an answer. */
  othersUnanswered(stream: number, requestKey: string): boolean {
    return this.unanswered(stream).some((key) => key !== requestKey);
  }

  /**
   * The stream's requests that await an answer: those it answers (its row's request_keys) not
   * marked answered. A request without a row (initialize's) counts as unanswered; its stream
   * is answered in the turn it opens.
   */
  unanswered(stream: number): string[] {
    return this.#sql
      .exec<{ request_key: string }>(
        `SELECT k.value AS request_key
           FROM streams s, json_each(s.request_keys) k
          WHERE s.stream = ?
            AND NOT EXISTS (SELECT 1 FROM requests r WHERE r.request_key = k.value AND r.answered = 1)`,
        stream,
      )
      .toArray()
      .map((row) => row.request_key);
  }
}
