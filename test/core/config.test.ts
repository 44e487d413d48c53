import { describe, expect, it } from 'vitest';
import { DEFAULT_ALLOWED_HOSTS, DEFAULT_ALLOWED_ORIGINS, MAX_BODY_BYTES, readConfig, type ConfigVars } from '../../src/config.ts';

describe('readConfig defaults', () => {
  it('reads an empty environment as the loopback-only configuration', () => {
    expect(readConfig({})).toEqual({
      allowedHosts: {
        any: false,
        entries: [
          { name: 'localhost', port: '*' },
          { name: '127.0.0.1', port: '*' },
          { name: '[::1]', port: '*' },
        ],
      },
      allowedOrigins: {
        any: false,
        entries: [
          { name: 'http://localhost', port: '*' },
          { name: 'http://127.0.0.1', port: '*' },
          { name: 'http://[::1]', port: '*' },
        ],
      },
      responseMode: 'sse',
      eventsHeartbeatMs: 15_000,
      heartbeatMs: 15_000,
      retryMs: 1_000,
      connectionBufferBytes: 1_048_576,
      maxConnectionAgeMs: 0,
      sessionTtlMs: 3_600_000,
      maxSessionEvents: 100_000,
      maxSessionBytes: 67_108_864,
      maxSessionRequests: 100_000,
      maxRunningCalls: 100,
      maxBodyBytes: 4_194_304,
      requestLog: true,
      taskTtlMs: 3_600_000,
      taskPollIntervalMs: 1_000,
      taskMaxEvents: 10_000,
      taskMaxEventBytes: 65_536,
      busShards: 1,
      maxListenStreams: 1024,
      maxEventStreamsPerPrincipal: 32,
      maxListensPerPrincipal: 32,
      maxStreamsPerPrincipal: 100,
      maxSessionsPerPrincipal: 100,
      maxTasksPerPrincipal: 1_000,
      auth: { mode: 'none' },
      rateLimitIpv6Prefix: 64,
      demoSignIn: false,
    });
  });

  it.each([
    { key: 'MAX_CONNECTION_AGE_MS', value: '30000', field: 'maxConnectionAgeMs', expected: 30_000 },
    { key: 'MAX_CONNECTION_AGE_MS', value: '0', field: 'maxConnectionAgeMs', expected: 0 },
    { key: 'SESSION_TTL_MS', value: '1000', field: 'sessionTtlMs', expected: 1_000 },
    { key: 'MAX_SESSION_EVENTS', value: '50', field: 'maxSessionEvents', expected: 50 },
    { key: 'MAX_SESSION_BYTES', value: '1024', field: 'maxSessionBytes', expected: 1_024 },
    { key: 'MAX_SESSION_REQUESTS', value: '20', field: 'maxSessionRequests', expected: 20 },
    { key: 'MAX_RUNNING_CALLS', value: '3', field: 'maxRunningCalls', expected: 3 },
    { key: 'CONNECTION_BUFFER_BYTES', value: '4096', field: 'connectionBufferBytes', expected: 4_096 },
    { key: 'TASK_TTL_MS', value: '60000', field: 'taskTtlMs', expected: 60_000 },
    { key: 'TASK_POLL_INTERVAL_MS', value: '250', field: 'taskPollIntervalMs', expected: 250 },
    { key: 'TASK_MAX_EVENTS', value: '100', field: 'taskMaxEvents', expected: 100 },
    { key: 'TASK_MAX_EVENT_BYTES', value: '2048', field: 'taskMaxEventBytes', expected: 2_048 },
    { key: 'BUS_SHARDS', value: '8', field: 'busShards', expected: 8 },
    { key: 'MAX_LISTEN_STREAMS', value: '4096', field: 'maxListenStreams', expected: 4_096 },
    { key: 'MAX_SESSIONS_PER_PRINCIPAL', value: '5', field: 'maxSessionsPerPrincipal', expected: 5 },
    { key: 'MAX_SESSIONS_PER_PRINCIPAL', value: '0', field: 'maxSessionsPerPrincipal', expected: 0 },
    { key: 'MAX_TASKS_PER_PRINCIPAL', value: '7', field: 'maxTasksPerPrincipal', expected: 7 },
    { key: 'MAX_TASKS_PER_PRINCIPAL', value: '0', field: 'maxTasksPerPrincipal', expected: 0 },
    { key: 'MAX_LISTENS_PER_PRINCIPAL', value: '4', field: 'maxListensPerPrincipal', expected: 4 },
    { key: 'MAX_LISTENS_PER_PRINCIPAL', value: '0', field: 'maxListensPerPrincipal', expected: 0 },
    { key: 'MAX_STREAMS_PER_PRINCIPAL', value: '250', field: 'maxStreamsPerPrincipal', expected: 250 },
    { key: 'MAX_STREAMS_PER_PRINCIPAL', value: '0', field: 'maxStreamsPerPrincipal', expected: 0 },
    { key: 'MAX_EVENT_STREAMS_PER_PRINCIPAL', value: '3', field: 'maxEventStreamsPerPrincipal', expected: 3 },
    { key: 'MAX_EVENT_STREAMS_PER_PRINCIPAL', value: '0', field: 'maxEventStreamsPerPrincipal', expected: 0 },
    { key: 'EVENTS_HEARTBEAT_MS', value: '1000', field: 'eventsHeartbeatMs', expected: 1_000 },
    { key: 'EVENTS_HEARTBEAT_MS', value: '30000', field: 'eventsHeartbeatMs', expected: 30_000 },
  ] as const)('reads $key=$value', ({ key, value, field, expected }) => {
    expect(readConfig({ [key]: value })[field]).toBe(expected);
  });

  it.each([
    'SESSION_TTL_MS',
    'MAX_SESSION_EVENTS',
    'MAX_SESSION_BYTES',
    'MAX_SESSION_REQUESTS',
    'MAX_RUNNING_CALLS',
    'CONNECTION_BUFFER_BYTES',
    'TASK_TTL_MS',
    'TASK_POLL_INTERVAL_MS',
    'TASK_MAX_EVENTS',
    'TASK_MAX_EVENT_BYTES',
    'BUS_SHARDS',
    'MAX_LISTEN_STREAMS',
  ] as const)('refuses %s = 0', (key) => {
    expect(() => readConfig({ [key]: '0' })).toThrow(`configuration: ${key} must be positive`);
  });

  it.each([
    { isolate: '4096', share: 32 },
    { isolate: '1024', share: 32 },
    { isolate: '100', share: 25 },
    { isolate: '8', share: 2 },
    { isolate: '3', share: 1 },
    { isolate: '1', share: 1 },
  ])(
    'shares MAX_LISTEN_STREAMS=$isolate by default as $share per principal: 32, or a quarter if less, at least 1',
    ({ isolate, share }) => {
      expect(readConfig({ MAX_LISTEN_STREAMS: isolate }).maxListensPerPrincipal).toBe(share);
    },
  );

  it("refuses MAX_LISTENS_PER_PRINCIPAL beyond MAX_LISTEN_STREAMS: it is a principal's share of them", () => {
    expect(readConfig({ MAX_LISTEN_STREAMS: '8', MAX_LISTENS_PER_PRINCIPAL: '8' }).maxListensPerPrincipal).toBe(8);
    expect(() => readConfig({ MAX_LISTEN_STREAMS: '8', MAX_LISTENS_PER_PRINCIPAL: '9' })).toThrow(
      'configuration: MAX_LISTENS_PER_PRINCIPAL must be at most MAX_LISTEN_STREAMS (8), got 9',
    );
    expect(() => readConfig({ MAX_LISTENS_PER_PRINCIPAL: '1025' })).toThrow('must be at most MAX_LISTEN_STREAMS (1024)');
  });

  it('refuses MAX_SESSION_REQUESTS beyond the stream numbers a session has (8,388,607)', () => {
    expect(readConfig({ MAX_SESSION_REQUESTS: '8388607' }).maxSessionRequests).toBe(8_388_607);
    expect(() => readConfig({ MAX_SESSION_REQUESTS: '8388608' })).toThrow('configuration: MAX_SESSION_REQUESTS must be at most 8388607');
  });

  it('refuses BUS_SHARDS beyond 64: every publish is a request to each shard', () => {
    expect(readConfig({ BUS_SHARDS: '64' }).busShards).toBe(64);
    expect(() => readConfig({ BUS_SHARDS: '65' })).toThrow('configuration: BUS_SHARDS must be at most 64');
  });

  it.each(['0', '30001', '-5', '1.5'])(
    'refuses EVENTS_HEARTBEAT_MS=%j: SEP-3415 wants a heartbeat at least every 30 s, and 0 would send none',
    (value) => {
      expect(() => readConfig({ EVENTS_HEARTBEAT_MS: value })).toThrow('configuration: EVENTS_HEARTBEAT_MS must be');
    },
  );

  it('refuses TASK_MAX_EVENT_BYTES beyond 1 MiB (an event is one row; a task object holds its events)', () => {
    expect(readConfig({ TASK_MAX_EVENT_BYTES: '1048576' }).taskMaxEventBytes).toBe(1_048_576);
    expect(() => readConfig({ TASK_MAX_EVENT_BYTES: '1048577' })).toThrow('configuration: TASK_MAX_EVENT_BYTES must be at most 1048576');
  });

  it.each(['0', '600000', ''])('refuses RETENTION_MS=%j: it was removed, and a silent no-op would mislead', (value) => {
    expect(() => readConfig({ RETENTION_MS: value })).toThrow('configuration: RETENTION_MS was removed');
  });

  it.each([
    { name: 'DEFAULT_ALLOWED_HOSTS', value: DEFAULT_ALLOWED_HOSTS, expected: 'localhost:*,127.0.0.1:*,[::1]:*' },
    { name: 'DEFAULT_ALLOWED_ORIGINS', value: DEFAULT_ALLOWED_ORIGINS, expected: 'http://localhost:*,http://127.0.0.1:*,http://[::1]:*' },
    { name: 'MAX_BODY_BYTES', value: MAX_BODY_BYTES, expected: 4 * 1024 * 1024 },
  ])('$name is $expected', ({ value, expected }) => {
    expect(value).toBe(expected);
  });

  it.each<{ name: string; vars: ConfigVars }>([
    { name: 'HEARTBEAT_MS is empty', vars: { HEARTBEAT_MS: '' } },
    { name: 'HEARTBEAT_MS is blank', vars: { HEARTBEAT_MS: '   ' } },
    { name: 'RETRY_MS is empty', vars: { RETRY_MS: '' } },
  ])('falls back to the default interval when $name', ({ vars }) => {
    const config = readConfig(vars);
    expect([config.heartbeatMs, config.retryMs]).toEqual([15_000, 1_000]);
  });
});

describe('readConfig RESPONSE_MODE', () => {
  it.each([
    { value: 'sse', mode: 'sse' },
    { value: 'json', mode: 'json' },
    { value: ' json ', mode: 'json' },
  ])('reads $value as $mode', ({ value, mode }) => {
    expect(readConfig({ RESPONSE_MODE: value }).responseMode).toBe(mode);
  });

  it.each([
    { name: 'upper-case SSE', value: 'SSE', shown: 'SSE' },
    { name: 'upper-case JSON', value: 'JSON', shown: 'JSON' },
    { name: 'an unknown mode', value: 'xml', shown: 'xml' },
    { name: 'an empty mode', value: '', shown: '' },
    { name: 'a blank mode (shown trimmed)', value: '  ', shown: '' },
  ])('refuses $name', ({ value, shown }) => {
    expect(() => readConfig({ RESPONSE_MODE: value })).toThrow(
      new Error(`configuration: RESPONSE_MODE must be "sse" or "json", got ${JSON.stringify(shown)}`),
    );
  });
});

describe('readConfig REQUEST_LOG', () => {
  it.each([
    { value: 'on', expected: true },
    { value: 'off', expected: false },
    { value: ' off ', expected: false },
  ])('reads $value as $expected', ({ value, expected }) => {
    expect(readConfig({ REQUEST_LOG: value }).requestLog).toBe(expected);
  });

  it.each([
    { name: 'a boolean word', value: 'false', shown: 'false' },
    { name: 'upper case', value: 'OFF', shown: 'OFF' },
    { name: 'an empty value', value: '', shown: '' },
  ])('refuses $name', ({ value, shown }) => {
    expect(() => readConfig({ REQUEST_LOG: value })).toThrow(
      new Error(`configuration: REQUEST_LOG must be "on" or "off", got ${JSON.stringify(shown)}`),
    );
  });
});

describe('readConfig HEARTBEAT_MS and RETRY_MS', () => {
  it.each([
    { name: 'HEARTBEAT_MS', key: 'HEARTBEAT_MS', value: '0', field: 'heartbeatMs', expected: 0 },
    { name: 'HEARTBEAT_MS', key: 'HEARTBEAT_MS', value: '5000', field: 'heartbeatMs', expected: 5000 },
    { name: 'HEARTBEAT_MS', key: 'HEARTBEAT_MS', value: ' 250 ', field: 'heartbeatMs', expected: 250 },
    { name: 'RETRY_MS', key: 'RETRY_MS', value: '0', field: 'retryMs', expected: 0 },
    { name: 'RETRY_MS', key: 'RETRY_MS', value: '30000', field: 'retryMs', expected: 30000 },
    { name: 'RETRY_MS', key: 'RETRY_MS', value: '9007199254740991', field: 'retryMs', expected: 9007199254740991 },
  ] as const)('reads $name=$value as $expected', ({ key, value, field, expected }) => {
    expect(readConfig({ [key]: value })[field]).toBe(expected);
  });

  it.each(
    (['HEARTBEAT_MS', 'RETRY_MS'] as const).flatMap((key) =>
      [
        { name: 'negative', value: '-1' },
        { name: 'fractional', value: '1.5' },
        { name: 'not a number', value: 'abc' },
        { name: 'infinite', value: 'Infinity' },
        { name: 'beyond the safe integers', value: '9007199254740992' },
        { name: 'a number with a unit', value: '15s' },
      ].map((row) => ({ ...row, key })),
    ),
  )('refuses a $name $key', ({ key, value }) => {
    expect(() => readConfig({ [key]: value })).toThrow(
      new Error(`configuration: ${key} must be a non-negative integer, got ${JSON.stringify(value)}`),
    );
  });
});

describe('readConfig allowlists', () => {
  it.each([
    {
      name: 'a custom host list replaces the default',
      vars: { ALLOWED_HOSTS: 'mcp.example.com, mcp.example.com:8443' },
      field: 'allowedHosts',
      list: { any: false, entries: [{ name: 'mcp.example.com' }, { name: 'mcp.example.com', port: '8443' }] },
    },
    { name: 'a wildcard host list', vars: { ALLOWED_HOSTS: '*' }, field: 'allowedHosts', list: { any: true, entries: [] } },
    {
      name: 'a custom origin list replaces the default',
      vars: { ALLOWED_ORIGINS: 'https://app.example.com' },
      field: 'allowedOrigins',
      list: { any: false, entries: [{ name: 'https://app.example.com' }] },
    },
    { name: 'a wildcard origin list', vars: { ALLOWED_ORIGINS: '*' }, field: 'allowedOrigins', list: { any: true, entries: [] } },
    { name: 'an empty host list (nothing allowed)', vars: { ALLOWED_HOSTS: '' }, field: 'allowedHosts', list: { any: false, entries: [] } },
  ] as const)('$name', ({ vars, field, list }) => {
    expect(readConfig(vars)[field]).toEqual(list);
  });

  it('keeps the default origin list when only the host list is set', () => {
    expect(readConfig({ ALLOWED_HOSTS: '*' }).allowedOrigins).toEqual(readConfig({}).allowedOrigins);
  });
});

describe('readConfig DEMO_SIGN_IN', () => {
  it.each([
    { name: 'unset', vars: {}, demoSignIn: false },
    { name: 'empty', vars: { DEMO_SIGN_IN: '' }, demoSignIn: false },
    { name: 'the one accepted value', vars: { DEMO_SIGN_IN: 'anyone-is-anyone' }, demoSignIn: true },
    { name: 'the accepted value with spaces', vars: { DEMO_SIGN_IN: ' anyone-is-anyone ' }, demoSignIn: true },
  ])('reads $name as $demoSignIn', ({ vars, demoSignIn }) => {
    expect(readConfig(vars).demoSignIn).toBe(demoSignIn);
  });

  it.each(['true', 'on', '1', 'yes', 'Anyone-Is-Anyone', 'anyone'])('refuses %j, naming the accepted value and its risk', (value) => {
    expect(() => readConfig({ DEMO_SIGN_IN: value })).toThrow(
      new Error(
        `configuration: DEMO_SIGN_IN must be "anyone-is-anyone" (the demo sign-in page, which believes any name, served beyond loopback) or unset, got ${JSON.stringify(value)}`,
      ),
    );
  });
});
