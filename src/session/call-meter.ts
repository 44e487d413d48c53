/**
 * A session's `tools/call`s as the metrics count them (core/metrics.ts `call`): each running
 * call's tool, start and events in this instance's memory, and one point when it is answered.
 * Nothing is kept, and nothing read, when the metrics are off: the hot path pays one check.
 * The tool is named only if the session's server registered it (`other` else): a call is
 * counted when it arrives, before the SDK has looked its name up, and may name anything.
 */
import type { JsonRpcMessage, JsonRpcRequest } from '../core/jsonrpc.ts';
import { metricTool } from '../core/metrics.ts';
import type { Metrics } from '../metrics/metrics.ts';

interface RunningCall {
  readonly tool: string;
  readonly started: number;
  events: number;
}

export class CallMeter {
  readonly #metrics: Metrics;
  readonly #principal: () => string;
  readonly #registered: (tool: string) => boolean;
  /** By request key (jsonrpc.ts idKey). */
  readonly #running = new Map<string, RunningCall>();

  /** `principal`: who the session's current request is from; `registered`: whether the session's server has a tool of that name. */
  constructor(metrics: Metrics, principal: () => string, registered: (tool: string) => boolean) {
    this.#metrics = metrics;
    this.#principal = principal;
    this.#registered = registered;
  }

  /** Requests registered under `keys` (in order): the calls among them start now. */
  started(requests: readonly JsonRpcRequest[], keys: readonly string[]): void {
    if (!this.#metrics.enabled) return;
    const now = Date.now();
    requests.forEach((request, i) => {
      if (request.method !== 'tools/call') return;
      this.#running.set(keys[i]!, { tool: metricTool(request.params?.name, this.#registered), started: now, events: 0 });
    });
  }

  /** A notification the server sent on request `key`'s behalf (progress, a log line). */
  event(key: string): void {
    const call = this.#running.get(key);
    if (call !== undefined) call.events++;
  }

  /** Request `key` is answered with `answer`. */
  answered(key: string, answer: JsonRpcMessage): void {
    const call = this.#running.get(key);
    if (call === undefined) return;
    this.#running.delete(key);
    const outcome =
      'error' in answer ? 'error' : (answer as { result?: { isError?: unknown } }).result?.isError === true ? 'tool_error' : 'ok';
    this.#metrics.write(
      { kind: 'call', tool: call.tool, outcome, durationMs: Date.now() - call.started, events: call.events },
      this.#principal(),
    );
  }

  /** The client cancelled request `key` (notifications/cancelled): it is never answered, so it ends here. */
  cancelled(key: string): void {
    const call = this.#running.get(key);
    if (call === undefined) return;
    this.#running.delete(key);
    this.#metrics.write(
      { kind: 'call', tool: call.tool, outcome: 'cancelled', durationMs: Date.now() - call.started, events: call.events },
      this.#principal(),
    );
  }

  /** The session ended: its calls end with it, uncounted (the session's own point says why). */
  forget(): void {
    this.#running.clear();
  }
}
