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

/** The project's METRICS_KEY (vitest.config.ts): MCP_METRICS bound without one is a configuration error. */
export const TEST_METRICS_KEY = 'the-metrics-key-of-the-tests-not-a-secret';

const hex = (bytes: ArrayBuffer) => [...new Uint8Array(bytes, 0, 16)].map((byte) => byte.toString(16).padStart(2, '0')).join('');

/** What a point's index should be, computed here apart from the library: the first 128 bits of HMAC-SHA-256(key, id), in hex. */
export async function keyedIndex(key: string, principalId: string): Promise<string> {
  const encoder = new TextEncoder();
  const hmac = await crypto.subtle.importKey('raw', encoder.encode(key), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  return hex(await crypto.subtle.sign('HMAC', hmac, encoder.encode(principalId)));
}

/** The index as it was, unkeyed: the first 128 bits of SHA-256(id), which anyone can compute for a guessed id. */
export async function unkeyedIndex(principalId: string): Promise<string> {
  return hex(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(principalId)));
}
