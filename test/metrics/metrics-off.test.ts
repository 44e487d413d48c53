/**
 * Without the MCP_METRICS binding nothing is written and nothing is computed for metrics
 * (src/metrics/metrics.ts); with one, each point is written once, its principal hashed.
 */
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import type { JsonRpcRequest } from '../../src/core/jsonrpc.ts';
import { Metrics, principalHash } from '../../src/metrics/metrics.ts';
import { CallMeter } from '../../src/session/call-meter.ts';

const call: JsonRpcRequest = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'countdown' } };

/** A dataset that keeps what it is given, and the work handed to waitUntil. */
function recording() {
  const points: AnalyticsEngineDataPoint[] = [];
  const pending: Promise<unknown>[] = [];
  const metrics = Metrics.of(
    { MCP_METRICS: { writeDataPoint: (point?: AnalyticsEngineDataPoint) => void points.push(point!) } },
    (promise) => pending.push(promise),
  );
  return { metrics, points, settled: () => Promise.all(pending) };
}

describe('Metrics', () => {
  it('is off in this project, whose Worker has no MCP_METRICS binding', () => {
    expect((env as { MCP_METRICS?: unknown }).MCP_METRICS).toBeUndefined();
    expect(Metrics.of(env, () => expect.fail('nothing to wait for'))).toBe(Metrics.off);
    expect(Metrics.off.enabled).toBe(false);
  });

  it('off, a call meter keeps nothing and writes nothing', () => {
    const meter = new CallMeter(Metrics.off, () => expect.fail('no principal is asked for'));
    meter.started([call], ['1']);
    meter.event('1');
    meter.answered('1', { jsonrpc: '2.0', id: 1, result: {} });
  });

  it('on, writes each point once, with the principal hashed, never the principal itself', async () => {
    const { metrics, points, settled } = recording();
    metrics.write({ kind: 'resume' }, 'oauth#alice');
    metrics.write({ kind: 'resume' }, 'oauth#alice');
    metrics.write({ kind: 'session', outcome: 'expired' }, undefined);
    await settled();
    const alice = await principalHash('oauth#alice');
    expect(alice).toMatch(/^[0-9a-f]{32}$/);
    expect(points.map((p) => p.indexes)).toEqual(expect.arrayContaining([[alice], [alice], ['']]));
    expect(points).toHaveLength(3);
    expect(JSON.stringify(points)).not.toContain('alice');
  });

  it('on, a call meter writes one call point when the call is answered, with its events', async () => {
    const { metrics, points, settled } = recording();
    const meter = new CallMeter(metrics, () => 'jwt#bob');
    meter.started([call, { jsonrpc: '2.0', id: 2, method: 'tools/list' }], ['1', '2']);
    meter.event('1');
    meter.event('1');
    meter.answered('2', { jsonrpc: '2.0', id: 2, result: {} });
    meter.answered('1', { jsonrpc: '2.0', id: 1, result: { isError: true, content: [] } });
    meter.answered('1', { jsonrpc: '2.0', id: 1, result: {} });
    await settled();
    expect(points).toHaveLength(1);
    expect(points[0]!.blobs).toEqual(['call', 'legacy', 'tools/call', 'countdown', 'tool_error', '']);
    expect(points[0]!.doubles![1]).toBe(2);
  });

  it('a dataset that throws fails nothing: the point is dropped with a log line', () => {
    const metrics = Metrics.of(
      {
        MCP_METRICS: {
          writeDataPoint: () => {
            throw new Error('too many data points');
          },
        },
      },
      () => undefined,
    );
    expect(() => metrics.write({ kind: 'session', outcome: 'created' }, undefined)).not.toThrow();
  });
});
