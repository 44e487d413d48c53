/**
 * Writes the server's counts (core/metrics.ts) to a Workers Analytics Engine dataset, the
 * optional `MCP_METRICS` binding, from where each is known: the Worker (requests, its own
 * refusals), the session object (sessions, resumes, calls, its refusals), the task object
 * (tasks). Without the binding, `Metrics.of` answers the instance that writes nothing and
 * computes nothing; with it, a point costs one `writeDataPoint` (no storage row, no request).
 */
import { dataPoint, type MetricEvent } from '../core/metrics.ts';
import { log } from '../core/log.ts';

/** What the library uses of an Analytics Engine dataset binding. */
export interface MetricsDataset {
  writeDataPoint(point?: AnalyticsEngineDataPoint): void;
}

/** The binding, as a Worker's or an object's env has it. */
export interface MetricsEnv {
  readonly MCP_METRICS?: MetricsDataset;
}

/** Keeps work alive past the response that started it (`ctx.waitUntil`). */
export type WaitUntil = (promise: Promise<unknown>) => void;

export class Metrics {
  /** Writes nothing: the configuration without the binding. */
  static readonly off = new Metrics(undefined, () => undefined);

  /** `env`: any Worker's or object's (one without the binding gets `off`). */
  static of(env: object, waitUntil: WaitUntil): Metrics {
    const dataset = (env as MetricsEnv).MCP_METRICS;
    return dataset === undefined ? Metrics.off : new Metrics(dataset, waitUntil);
  }

  readonly #dataset: MetricsDataset | undefined;
  readonly #waitUntil: WaitUntil;

  private constructor(dataset: MetricsDataset | undefined, waitUntil: WaitUntil) {
    this.#dataset = dataset;
    this.#waitUntil = waitUntil;
  }

  get enabled(): boolean {
    return this.#dataset !== undefined;
  }

  /**
   * One point for `event`, of principal `principalId` (written as its hash, never itself);
   * `undefined` where no principal is known (an idle session's expiry, a request refused
   * before authentication): an empty index.
   */
  write(event: MetricEvent, principalId: string | undefined): void {
    const dataset = this.#dataset;
    if (dataset === undefined) return;
    const known = principalId === undefined ? '' : HASHES.get(principalId);
    if (known !== undefined) {
      send(dataset, event, known);
      return;
    }
    const id = principalId as string;
    this.#waitUntil(
      principalHash(id).then((hash) => {
        remember(id, hash);
        send(dataset, event, hash);
      }),
    );
  }
}

/** A count never fails what is counted: a refused point is a log line, the request goes on. */
function send(dataset: MetricsDataset, event: MetricEvent, hash: string): void {
  const { indexes, blobs, doubles } = dataPoint(event, hash);
  try {
    dataset.writeDataPoint({ indexes: [...indexes], blobs: [...blobs], doubles: [...doubles] });
  } catch (error) {
    log({ msg: 'mcp.metrics.error', error: String(error) });
  }
}

/** Principals' hashes this isolate computed, so a busy principal is hashed once. */
const HASHES = new Map<string, string>();
const MAX_HASHES = 4096;

function remember(principalId: string, hash: string): void {
  if (HASHES.size >= MAX_HASHES) HASHES.clear();
  HASHES.set(principalId, hash);
}

/** The first 128 bits of the principal id's SHA-256, in hex: one principal's points group together; its id is not in them. */
export async function principalHash(principalId: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(principalId));
  return [...new Uint8Array(digest, 0, 16)].map((byte) => byte.toString(16).padStart(2, '0')).join('');
}
