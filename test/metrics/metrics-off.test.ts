/**
 * Without the MCP_METRICS binding nothing is written and nothing is computed for metrics
 * (src/metrics/metrics.ts); with one, each point is written once, its principal indexed by an
 * HMAC keyed with METRICS_KEY (without the key, a configuration error), a call's tool named only
 * if the session's server registered it.
 */
import { createExecutionContext } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import type { JsonRpcRequest } from '../../src/core/jsonrpc.ts';
import { createMcpWorker } from '../../src/lib.ts';
import { Metrics } from '../../src/metrics/metrics.ts';
import { CallMeter } from '../../src/session/call-meter.ts';
import { keyedIndex, unkeyedIndex } from '../fixture-server/metrics-recorder.ts';
import { initializeRequest, POST_HEADERS } from '../support/mcp-http.ts';

const KEY = 'a-metrics-key-of-the-tests-0123456789';
const OTHER_KEY = 'another-deployment-s-metrics-key-9876543210';

/** A registry of the tools a session's server registered, as the call meter asks it. */
const registry =
  (...tools: string[]) =>
  (name: string) =>
    tools.includes(name);

const call: JsonRpcRequest = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'countdown' } };

/** A dataset that keeps what it is given, and the work handed to waitUntil. */
function recording(key = KEY) {
  const points: AnalyticsEngineDataPoint[] = [];
  const pending: Promise<unknown>[] = [];
  const metrics = Metrics.of(
    { MCP_METRICS: { writeDataPoint: (point?: AnalyticsEngineDataPoint) => void points.push(point!) }, METRICS_KEY: key },
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
    const meter = new CallMeter(
      Metrics.off,
      () => expect.fail('no principal is asked for'),
      () => expect.fail('no registry is asked'),
    );
    meter.started([call], ['1']);
    meter.event('1');
    meter.answered('1', { jsonrpc: '2.0', id: 1, result: {} });
  });

  it('on, writes each point once, with the principal indexed, never the principal itself', async () => {
    const { metrics, points, settled } = recording();
    metrics.write({ kind: 'resume' }, 'oauth#alice');
    metrics.write({ kind: 'resume' }, 'oauth#alice');
    metrics.write({ kind: 'session', outcome: 'expired' }, undefined);
    await settled();
    const alice = await keyedIndex(KEY, 'oauth#alice');
    expect(alice).toMatch(/^[0-9a-f]{32}$/);
    expect(points.map((p) => p.indexes)).toEqual(expect.arrayContaining([[alice], [alice], ['']]));
    expect(points).toHaveLength(3);
    expect(JSON.stringify(points)).not.toContain('alice');
  });

  it('on, a call meter writes one call point when the call is answered, with its events', async () => {
    const { metrics, points, settled } = recording();
    const meter = new CallMeter(metrics, () => 'jwt#bob', registry('countdown'));
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

  it("on, the index is keyed: not the unkeyed SHA-256 prefix a guess can be checked against, and another key's differs", async () => {
    const ours = recording(KEY);
    const theirs = recording(OTHER_KEY);
    ours.metrics.write({ kind: 'resume' }, 'oauth#alice');
    theirs.metrics.write({ kind: 'resume' }, 'oauth#alice');
    await Promise.all([ours.settled(), theirs.settled()]);
    const [index] = ours.points[0]!.indexes!;
    const [otherIndex] = theirs.points[0]!.indexes!;
    expect(index).toMatch(/^[0-9a-f]{32}$/);
    expect(index).not.toBe(await unkeyedIndex('oauth#alice'));
    expect(otherIndex).not.toBe(index);
    // HMAC-SHA-256 of the id under the key, its first 128 bits.
    expect(index).toBe(await keyedIndex(KEY, 'oauth#alice'));
    expect(otherIndex).toBe(await keyedIndex(OTHER_KEY, 'oauth#alice'));
  });

  it('on, a call to a tool the server did not register is counted as `other`, its name nowhere', async () => {
    const { metrics, points, settled } = recording();
    const meter = new CallMeter(metrics, () => 'jwt#bob', registry('countdown'));
    const unknown = `lookup_${'x'.repeat(3_000)}_for_someone@example.com`;
    meter.started([{ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: unknown } }, call], ['3', '1']);
    meter.answered('3', { jsonrpc: '2.0', id: 3, error: { code: -32602, message: 'Tool not found' } });
    meter.answered('1', { jsonrpc: '2.0', id: 1, result: {} });
    await settled();
    expect(points.map((p) => p.blobs)).toEqual([
      ['call', 'legacy', 'tools/call', 'other', 'error', ''],
      ['call', 'legacy', 'tools/call', 'countdown', 'ok', ''],
    ]);
    expect(JSON.stringify(points)).not.toContain('someone@example.com');
  });

  it('the binding without METRICS_KEY is a configuration error that names the fix', () => {
    const dataset = { writeDataPoint: () => expect.fail('nothing is written') };
    expect(() => Metrics.of({ MCP_METRICS: dataset }, () => undefined)).toThrow(
      /^configuration: MCP_METRICS is bound but METRICS_KEY is not set.*wrangler secret put METRICS_KEY/,
    );
    expect(() => Metrics.of({ MCP_METRICS: dataset, METRICS_KEY: 'short' }, () => undefined)).toThrow(
      /METRICS_KEY must be at least 32 bytes/,
    );
  });

  it('a Worker whose MCP_METRICS has no METRICS_KEY answers 500 and writes nothing', async () => {
    const written: unknown[] = [];
    const worker = createMcpWorker<Env>({ sessions: (e) => e.MCP_SESSION });
    const response = await worker.fetch(
      new Request('http://localhost/mcp', { method: 'POST', headers: POST_HEADERS, body: JSON.stringify(initializeRequest()) }),
      { ...env, MCP_METRICS: { writeDataPoint: (point: unknown) => void written.push(point) } } as Env,
      createExecutionContext(),
    );
    expect(response.status).toBe(500);
    expect(written).toEqual([]);
  });

  it('a dataset that throws fails nothing: the point is dropped with a log line', () => {
    const metrics = Metrics.of(
      {
        MCP_METRICS: {
          writeDataPoint: () => {
            throw new Error('too many data points');
          },
        },
        METRICS_KEY: KEY,
      },
      () => undefined,
    );
    expect(() => metrics.write({ kind: 'session', outcome: 'created' }, undefined)).not.toThrow();
  });
});
