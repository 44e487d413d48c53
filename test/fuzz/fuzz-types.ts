/**
 * What the parts of the fuzzer (test/fuzz/fuzz-*.ts) and both of its runners share: how a
 * request is sent (`Fetcher`), the protocol revisions, the counts a run keeps and the line it
 * prints, and a violation.
 */

/**
 * Sends a request. `streamed`: the body was given as a stream, to go without Content-Length.
 * A fetcher that will not send a request (its HTTP stack refuses a header) throws an Error
 * named `ClientRefusal`: the request is skipped, not held against the server.
 */
export type Fetcher = (request: Request, sending?: { streamed: boolean }) => Promise<Response>;
export const CLIENT_REFUSAL = 'ClientRefusal';

export const LEGACY_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26'] as const;
export const MODERN_VERSION = '2026-07-28';

export type Tally = {
  requests: number;
  fiveXX: number;
  leaks: number;
  withoutInitialize: number;
  broken: number;
  skipped: number;
  /** GETs whose cursor the server took as a continuation point: how much the fuzz reached past the refusals. */
  resumed: number;
};
export type Violation = { kind: 'fiveXX' | 'leaks' | 'withoutInitialize' | 'broken'; what: string; request: string; answer: string };

/** The one line both runners print. */
export const summary = (t: Tally, seed: number) =>
  `fuzz: ${t.requests} requests, ${t.fiveXX} 5xx, ${t.leaks} leaks, ${t.withoutInitialize} sessions without initialize, ${t.broken} broken sessions, ${t.resumed} resumes (seed ${seed})`;
