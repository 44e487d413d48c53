/**
 * The tests' stand-in for a Workers Analytics Engine dataset: with `METRICS_RECORDER = "on"`
 * (vitest.config.ts, project `metrics`) the fixture's Worker and objects get this recorder as
 * their MCP_METRICS binding, and the test reads what the library wrote from the same isolate.
 * A local Analytics Engine binding writes nowhere, and a recorder behind a service binding
 * loses the calls of a request whose context has ended; this one keeps every point.
 */
import type { MetricsDataset } from '../../src/metrics/metrics.ts';

export const recordedPoints: AnalyticsEngineDataPoint[] = [];

const recorder: MetricsDataset = {
  writeDataPoint(point) {
    if (point !== undefined) recordedPoints.push(point);
  },
};

const recording = new WeakMap<object, object>();

/** `env`, with the recorder as MCP_METRICS where the project asks for it (one object per env, so config caches hold). */
export function withRecorder<E extends object>(env: E): E {
  if ((env as { METRICS_RECORDER?: string }).METRICS_RECORDER !== 'on') return env;
  let wrapped = recording.get(env);
  if (wrapped === undefined) {
    wrapped = { ...env, MCP_METRICS: recorder };
    recording.set(env, wrapped);
  }
  return wrapped as E;
}
