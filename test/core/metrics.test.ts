/**
 * Every metric's data point (src/core/metrics.ts): the fixed layout docs/operations.md's queries
 * read; what a client chose (a method, a tool's name) reduced to what the server knows, or `other`.
 */
import { describe, expect, it } from 'vitest';
import { readConfig } from '../../src/config.ts';
import {
  dataPoint,
  type MetricEvent,
  type MetricMethod,
  metricMethod,
  metricTool,
  outcomeOfStatus,
  readMetricsKey,
  WEBHOOK_HELD,
  webhookAttemptEvent,
} from '../../src/core/metrics.ts';
import { MCP_METHODS } from '../../src/core/wire.ts';

const H = '0123456789abcdef0123456789abcdef';

describe('dataPoint', () => {
  it.each<[MetricEvent, readonly string[], readonly number[]]>([
    [
      { kind: 'request', era: 'legacy', method: 'POST', status: 200, durationMs: 4, bytes: 120 },
      ['request', 'legacy', 'POST', '', 'ok', ''],
      [4, 0, 120, 200],
    ],
    [
      { kind: 'request', era: 'modern', method: 'tools/call', status: 429, durationMs: 1, bytes: 0 },
      ['request', 'modern', 'tools/call', '', 'refused', ''],
      [1, 0, 0, 429],
    ],
    [
      { kind: 'request', era: 'legacy', method: 'GET', status: 500, durationMs: 2, bytes: 0 },
      ['request', 'legacy', 'GET', '', 'error', ''],
      [2, 0, 0, 500],
    ],
    [
      { kind: 'refusal', era: 'legacy', reason: 'unknown_stream', status: 409 },
      ['refusal', 'legacy', '', '', 'refused', 'unknown_stream'],
      [0, 0, 0, 409],
    ],
    [
      { kind: 'refusal', era: 'legacy', reason: 'session_not_found', status: 404 },
      ['refusal', 'legacy', '', '', 'refused', 'session_not_found'],
      [0, 0, 0, 404],
    ],
    [{ kind: 'session', outcome: 'created' }, ['session', 'legacy', '', '', 'created', ''], [0, 0, 0, 0]],
    [{ kind: 'session', outcome: 'expired' }, ['session', 'legacy', '', '', 'expired', ''], [0, 0, 0, 0]],
    [{ kind: 'resume' }, ['resume', 'legacy', 'GET', '', 'resumed', ''], [0, 0, 0, 0]],
    [
      { kind: 'call', tool: 'countdown', outcome: 'ok', durationMs: 30, events: 3 },
      ['call', 'legacy', 'tools/call', 'countdown', 'ok', ''],
      [30, 3, 0, 0],
    ],
    [
      { kind: 'call', tool: '', outcome: 'interrupted', durationMs: 0, events: 0 },
      ['call', 'legacy', 'tools/call', '', 'interrupted', ''],
      [0, 0, 0, 0],
    ],
    [
      { kind: 'task', tool: 'work', status: 'completed', interrupted: false, ageMs: 90, events: 4 },
      ['task', 'modern', 'tools/call', 'work', 'completed', ''],
      [90, 4, 0, 0],
    ],
    [
      { kind: 'task', tool: 'work', status: 'failed', interrupted: true, ageMs: 5, events: 1 },
      ['task', 'modern', 'tools/call', 'work', 'failed', 'task_interrupted'],
      [5, 1, 0, 0],
    ],
    // Webhooks (issue 47): no URL, no host, no client string: the outcome, the failure category, numbers.
    [
      { kind: 'webhook_attempt', outcome: 'delivered', attempt: 1, category: '', durationMs: 12, lagMs: 40 },
      ['webhook_attempt', 'modern', '', '', 'delivered', ''],
      [12, 1, 40, 0],
    ],
    [
      { kind: 'webhook_attempt', outcome: 'retry', attempt: 3, category: 'http_5xx', durationMs: 7, lagMs: 0 },
      ['webhook_attempt', 'modern', '', '', 'retry', 'http_5xx'],
      [7, 3, 0, 0],
    ],
    [
      { kind: 'webhook_attempt', outcome: 'held', attempt: 0, category: '', durationMs: 0, lagMs: 0 },
      ['webhook_attempt', 'modern', '', '', 'held', ''],
      [0, 0, 0, 0],
    ],
    [{ kind: 'webhook_subscription', outcome: 'created' }, ['webhook_subscription', 'modern', '', '', 'created', ''], [0, 0, 0, 0]],
    [{ kind: 'webhook_subscription', outcome: 'operator' }, ['webhook_subscription', 'modern', '', '', 'operator', ''], [0, 0, 0, 0]],
    [{ kind: 'webhook_verification', outcome: 'cached' }, ['webhook_verification', 'modern', '', '', 'cached', ''], [0, 0, 0, 0]],
    [
      { kind: 'webhook_verification', outcome: 'challenge_failed' },
      ['webhook_verification', 'modern', '', '', 'challenge_failed', ''],
      [0, 0, 0, 0],
    ],
  ])('%j', (event, blobs, doubles) => {
    expect(dataPoint(event, H)).toEqual({ indexes: [H], blobs, doubles });
  });

  it.each([
    [101, 'ok'],
    [204, 'ok'],
    [399, 'ok'],
    [400, 'refused'],
    [499, 'refused'],
    [500, 'error'],
    [503, 'error'],
  ] as const)('status %i is %s', (status, outcome) => {
    expect(outcomeOfStatus(status)).toBe(outcome);
  });
});

describe('metricMethod: what a request point names its method by', () => {
  const long = `tools/call${'x'.repeat(5_023)}`;
  it.each<[string | null, string, string]>([
    // Mcp-Method names an MCP method of either era (or a draft this server serves): kept.
    ['tools/call', 'POST', 'tools/call'],
    ['initialize', 'POST', 'initialize'],
    ['notifications/initialized', 'POST', 'notifications/initialized'],
    ['subscriptions/listen', 'POST', 'subscriptions/listen'],
    ['server/discover', 'POST', 'server/discover'],
    ['tasks/get', 'POST', 'tasks/get'],
    ['tasks/update', 'POST', 'tasks/update'],
    ['tasks/stream', 'POST', 'tasks/stream'],
    ['tasks/result', 'POST', 'tasks/result'],
    ['notifications/tasks/status', 'POST', 'notifications/tasks/status'],
    // Anything else the client put there: `other`, however long, whatever it holds.
    [long, 'POST', 'other'],
    ['someone@example.com', 'POST', 'other'],
    ['Tools/Call', 'POST', 'other'],
    ['tools/call ', 'POST', 'other'],
    ['', 'POST', 'other'],
    ['constructor', 'POST', 'other'],
    ['__proto__', 'POST', 'other'],
    // No Mcp-Method: the HTTP method, one of the registered ones, else `other`.
    [null, 'POST', 'POST'],
    [null, 'GET', 'GET'],
    [null, 'DELETE', 'DELETE'],
    [null, 'OPTIONS', 'OPTIONS'],
    [null, 'PATCH', 'PATCH'],
    [null, 'HEAD', 'HEAD'],
    [null, 'BREW', 'other'],
    [null, 'X'.repeat(4_000), 'other'],
  ])('%j with %s → %s', (header, http, expected) => {
    expect(metricMethod(header, http)).toBe(expected);
  });

  it('knows every method this server names on the wire, both eras', () => {
    for (const method of ['ping', 'resources/read', 'prompts/get', 'completion/complete', 'logging/setLevel', 'notifications/cancelled']) {
      expect(metricMethod(method, 'POST')).toBe(method);
    }
    expect(MCP_METHODS.every((method) => metricMethod(method, 'POST') === method)).toBe(true);
  });
});

describe('metricTool: a tool the server registered, else other', () => {
  const registered = new Set(['countdown', 'slow_compute', 'a'.repeat(128), 'b'.repeat(129)]);
  const isRegistered = (name: string) => registered.has(name);
  const unknown = `lookup_${'x'.repeat(3_000)}_for_someone@example.com`;
  it.each<[unknown, string]>([
    ['countdown', 'countdown'],
    ['slow_compute', 'slow_compute'],
    ['a'.repeat(128), 'a'.repeat(128)],
    // Registered, but longer than a tool name may be (SEP-986: 128): bounded all the same.
    ['b'.repeat(129), 'other'],
    [unknown, 'other'],
    ['Countdown', 'other'],
    ['', 'other'],
    [undefined, 'other'],
    [42, 'other'],
    [{ name: 'countdown' }, 'other'],
  ])('%j → %s', (name, expected) => {
    expect(metricTool(name, isRegistered)).toBe(expected);
  });

  it('asks the registry nothing for a name that is not a string', () => {
    expect(metricTool(['countdown'], () => expect.fail('not asked'))).toBe('other');
  });
});

describe('dataPoint bounds what a client chose, whatever the event says', () => {
  it('a method that reached it unreduced (a cast), or a tool name longer than a name may be, is `other`', () => {
    const method = 'x'.repeat(5_033) as MetricMethod;
    const tool = 'y'.repeat(3_031);
    const request = dataPoint({ kind: 'request', era: 'modern', method, status: 400, durationMs: 0, bytes: 0 }, H);
    const call = dataPoint({ kind: 'call', tool, outcome: 'error', durationMs: 0, events: 0 }, H);
    expect(request.blobs[2]).toBe('other');
    expect(call.blobs[3]).toBe('other');
  });
});

describe('readMetricsKey: MCP_METRICS needs METRICS_KEY', () => {
  const key = 'k'.repeat(32);
  it('is unneeded without the binding', () => {
    expect(readMetricsKey(false, undefined)).toBeUndefined();
    expect(readMetricsKey(false, key)).toBeUndefined();
  });

  it('is the key with the binding', () => {
    expect(readMetricsKey(true, key)).toBe(key);
  });

  it.each([undefined, '', 'short', 'é'.repeat(15)])('%j with the binding is a configuration error that names the fix', (value) => {
    expect(() => readMetricsKey(true, value)).toThrow(/^configuration: .*METRICS_KEY.*wrangler secret put METRICS_KEY/);
  });

  it('readConfig refuses the binding without the key, and takes it with one', () => {
    expect(() => readConfig({ MCP_METRICS: { writeDataPoint() {} } })).toThrow('configuration: MCP_METRICS is bound but METRICS_KEY');
    expect(() => readConfig({ MCP_METRICS: { writeDataPoint() {} }, METRICS_KEY: key })).not.toThrow();
    expect(() => readConfig({})).not.toThrow();
  });
});

describe('webhookAttemptEvent: a judged webhook attempt as its point', () => {
  const judged = { attempt: 1, durationMs: 30, storedAt: 1_000, now: 1_250 } as const;
  it.each([
    [{ kind: 'response', status: 204 }, 'delivered', { outcome: 'delivered', category: '', lagMs: 250 }],
    [{ kind: 'response', status: 410 }, 'declined', { outcome: 'declined', category: 'http_4xx', lagMs: 0 }],
    [{ kind: 'response', status: 302 }, 'retry', { outcome: 'retry', category: 'http_4xx', lagMs: 0 }],
    [{ kind: 'response', status: 413 }, 'give_up', { outcome: 'gave_up', category: 'http_4xx', lagMs: 0 }],
    [{ kind: 'response', status: 503 }, 'suspend', { outcome: 'suspended', category: 'http_5xx', lagMs: 0 }],
    [{ kind: 'unreachable', reason: 'timeout' }, 'retry', { outcome: 'retry', category: 'timeout', lagMs: 0 }],
  ] as const)('%j judged %s', (outcome, decision, expected) => {
    expect(webhookAttemptEvent({ ...judged, outcome, decision })).toEqual({
      kind: 'webhook_attempt',
      attempt: 1,
      durationMs: 30,
      ...expected,
    });
  });

  it('a lag only for a first attempt of an occurrence delivered: none for a retry, an envelope, a clock behind the store', () => {
    const delivered = { outcome: { kind: 'response', status: 200 }, decision: 'delivered' } as const;
    expect(webhookAttemptEvent({ ...judged, ...delivered, attempt: 2 }).lagMs).toBe(0);
    expect(webhookAttemptEvent({ ...judged, ...delivered, storedAt: undefined }).lagMs).toBe(0);
    expect(webhookAttemptEvent({ ...judged, ...delivered, now: 900 }).lagMs).toBe(0);
  });

  it('held: not attempted (attempt 0, no category, no duration)', () => {
    expect(dataPoint(WEBHOOK_HELD, 'i')).toEqual({
      indexes: ['i'],
      blobs: ['webhook_attempt', 'modern', '', '', 'held', ''],
      doubles: [0, 0, 0, 0],
    });
  });
});
