/**
 * Writes the server's counts (core/metrics.ts) to a Workers Analytics Engine dataset, the
 * optional `MCP_METRICS` binding, from where each is known: the Worker (requests, its own
 * refusals, a webhook subscribe's verification), the session object (sessions, resumes, calls,
 * its refusals), the task object (tasks), a webhook subscription's object (its attempts, its
 * life). Without the binding, `Metrics.of` answers the instance that writes nothing and
 * computes nothing; with it, a point costs one `writeDataPoint` (no storage row, no request).
 *
 * A point's index is the principal's HMAC-SHA-256 under the `METRICS_KEY` secret (its first 128
 * bits): one principal's points group together, and reading the dataset does not let anyone
 * confirm a guessed identity, which a plain hash of the id did. The binding without the key is
 * a configuration error (core/metrics.ts readMetricsKey), as config.ts reports it.
 */
import type { McpServer } from '@modelcontextprotocol/server';
import { dataPoint, type MetricEvent, readMetricsKey } from '../core/metrics.ts';
import { hex } from '../core/digest.ts';
import { log } from '../core/log.ts';

/** What the library uses of an Analytics Engine dataset binding. */
export interface MetricsDataset {
  writeDataPoint(point?: AnalyticsEngineDataPoint): void;
}

/** The binding, and the secret its index is keyed with, as a Worker's or an object's env has them. */
export interface MetricsEnv {
  readonly MCP_METRICS?: MetricsDataset;
  /** Secret (`wrangler secret put METRICS_KEY`): at least 32 bytes; needed with MCP_METRICS. */
  readonly METRICS_KEY?: string;
}

/** Keeps work alive past the response that started it (`ctx.waitUntil`). */
export type WaitUntil = (promise: Promise<unknown>) => void;

export class Metrics {
  /** Writes nothing: the configuration without the binding. */
  static readonly off = new Metrics(undefined, '', () => undefined);

  /**
   * `env`: any Worker's or object's (one without the binding gets `off`). Throws the
   * configuration error of a binding without its key: every caller has read the configuration
   * (config.ts) first, which reports it as the Worker reports any.
   */
  static of(env: object, waitUntil: WaitUntil): Metrics {
    const { MCP_METRICS: dataset, METRICS_KEY } = env as MetricsEnv;
    if (dataset === undefined) return Metrics.off;
    return new Metrics(dataset, readMetricsKey(true, METRICS_KEY)!, waitUntil);
  }

  readonly #dataset: MetricsDataset | undefined;
  readonly #key: string;
  readonly #waitUntil: WaitUntil;

  private constructor(dataset: MetricsDataset | undefined, key: string, waitUntil: WaitUntil) {
    this.#dataset = dataset;
    this.#key = key;
    this.#waitUntil = waitUntil;
  }

  get enabled(): boolean {
    return this.#dataset !== undefined;
  }

  /**
   * One point for `event`, of principal `principalId` (written as its keyed index, never
   * itself); `undefined` where no principal is known (an idle session's expiry, a request
   * refused before authentication): an empty index.
   */
  write(event: MetricEvent, principalId: string | undefined): void {
    const dataset = this.#dataset;
    if (dataset === undefined) return;
    const known = principalId === undefined ? '' : indexes(this.#key).get(principalId);
    if (known !== undefined) {
      send(dataset, event, known);
      return;
    }
    const id = principalId as string;
    const key = this.#key;
    this.#waitUntil(
      metricsIndex(key, id).then((index) => {
        remember(key, id, index);
        send(dataset, event, index);
      }),
    );
  }
}

/** A count never fails what is counted: a refused point is a log line, the request goes on. */
function send(dataset: MetricsDataset, event: MetricEvent, index: string): void {
  const { indexes, blobs, doubles } = dataPoint(event, index);
  try {
    dataset.writeDataPoint({ indexes: [...indexes], blobs: [...blobs], doubles: [...doubles] });
  } catch (error) {
    log({ msg: 'mcp.metrics.error', error: String(error) });
  }
}

/**
 * What this isolate computed under one key: the key imported once, and principals' indexes, so
 * a busy principal is signed once. A deployment has one key; another (a test's) starts afresh.
 */
let computed: { readonly key: string; readonly hmac: Promise<CryptoKey>; readonly indexes: Map<string, string> } | undefined;
const MAX_INDEXES = 4096;

function underKey(key: string) {
  if (computed?.key !== key) {
    const hmac = crypto.subtle.importKey('raw', new TextEncoder().encode(key), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
    computed = { key, hmac, indexes: new Map() };
  }
  return computed;
}

const indexes = (key: string) => underKey(key).indexes;

function remember(key: string, principalId: string, index: string): void {
  const cache = indexes(key);
  if (cache.size >= MAX_INDEXES) cache.clear();
  cache.set(principalId, index);
}

/** The first 128 bits of HMAC-SHA-256(`key`, principal id), in hex: a point's index. */
export async function metricsIndex(key: string, principalId: string): Promise<string> {
  const mac = await crypto.subtle.sign('HMAC', await underKey(key).hmac, new TextEncoder().encode(principalId));
  return hex(mac, 16);
}

/**
 * Whether `server` (a session's McpServer) registered a tool of that name, and has it enabled:
 * what core/metrics.ts metricTool asks before a call's point names its tool. The SDK answers it
 * with `toolInputSchemaJson`, `undefined` for a name it has no tool of (it converts the tool's
 * input schema once, as `tools/list` would); no server yet, no tool.
 */
export function registeredTool(server: McpServer | undefined, name: string): boolean {
  return server?.toolInputSchemaJson(name) !== undefined;
}
