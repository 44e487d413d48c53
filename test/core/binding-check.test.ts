/**
 * The bindings a Worker was configured to use (core/binding-check.ts), as a table: what each
 * use finds bound → the problems, each naming the binding, what wrangler.toml should say, and
 * how to do without it where one can. Pure: fakes stand in for the bindings.
 */
import { describe, expect, it } from 'vitest';
import { bindingProblems, declarationOf, isBindingOfKind, type BindingKind, type FoundBinding } from '../../src/core/binding-check.ts';

const fn = () => undefined;
const NAMESPACE = { idFromName: fn, get: fn };
const KV = { get: fn, put: fn, list: fn };
const LIMITER = { limit: fn };
const DATASET = { writeDataPoint: fn };

describe('isBindingOfKind', () => {
  it.each<{ value: unknown; kind: BindingKind; is: boolean }>([
    { value: NAMESPACE, kind: 'durable-object', is: true },
    { value: KV, kind: 'durable-object', is: false },
    { value: KV, kind: 'kv', is: true },
    { value: NAMESPACE, kind: 'kv', is: false },
    { value: LIMITER, kind: 'rate-limit', is: true },
    { value: DATASET, kind: 'analytics-engine', is: true },
    { value: 'MCP_SESSION', kind: 'durable-object', is: false },
    { value: { idFromName: 'x', get: fn }, kind: 'durable-object', is: false },
    { value: null, kind: 'kv', is: false },
    { value: undefined, kind: 'rate-limit', is: false },
  ])('$kind: $is', ({ value, kind, is }) => {
    expect(isBindingOfKind(value, kind)).toBe(is);
  });
});

describe('bindingProblems', () => {
  const found = (use: FoundBinding['use'], value: unknown, name: string | undefined = undefined, required = true): FoundBinding => ({
    use,
    name,
    value,
    required,
  });

  it.each<{ name: string; bindings: FoundBinding[]; problems: { subject: string; says: RegExp[] }[] }>([
    {
      name: 'everything bound, of its kind',
      bindings: [
        found('sessions', NAMESPACE, 'MCP_SESSION'),
        found('bus', NAMESPACE, 'MCP_BUS'),
        found('tasks', NAMESPACE, 'MCP_TASKS'),
        found('principals', NAMESPACE, 'MCP_PRINCIPALS'),
        found('rateLimit', LIMITER, 'MCP_RATE_LIMIT'),
        found('oauthKv', KV, 'OAUTH_KV'),
        found('metrics', DATASET, 'MCP_METRICS', false),
      ],
      problems: [],
    },
    {
      name: 'the sessions missing: required, no way without',
      bindings: [found('sessions', undefined, 'MCP_SESSION')],
      problems: [
        {
          subject: 'MCP_SESSION',
          says: [
            /^MCP_SESSION is not bound \(the sessions: createMcpWorker's `sessions` reads MCP_SESSION\)/,
            /add to wrangler\.toml \[\[durable_objects\.bindings\]\] name = "MCP_SESSION" class_name = "<your class extending McpSessionObject>"/,
            /storage = "sqlite"/,
          ],
        },
      ],
    },
    {
      name: 'the tasks missing while `tasks` was given: an error, not tasks off',
      bindings: [found('sessions', NAMESPACE, 'MCP_SESSION'), found('tasks', undefined, 'MCP_TASKS')],
      problems: [
        {
          subject: 'MCP_TASKS',
          says: [
            /^MCP_TASKS is not bound \(the Tasks extension: createMcpWorker's `tasks` reads MCP_TASKS\)/,
            /class_name = "<your class extending McpTaskObject>"/,
            /or remove `tasks` from createMcpWorker's options/,
          ],
        },
      ],
    },
    {
      name: 'the bus and the registry missing, under other names',
      bindings: [found('bus', undefined, 'EVENTS'), found('principals', undefined, 'REGISTRY')],
      problems: [
        { subject: 'EVENTS', says: [/name = "EVENTS" class_name = "McpEventBus"/, /or remove `bus`/] },
        { subject: 'REGISTRY', says: [/name = "REGISTRY" class_name = "McpPrincipalRegistry"/, /or remove `principals`/] },
      ],
    },
    {
      name: 'an accessor that reads no key of the environment (a value of its own): its usual name',
      bindings: [found('rateLimit', undefined)],
      problems: [
        { subject: 'MCP_RATE_LIMIT', says: [/createMcpWorker's `rateLimit` reads it\)/, /\[\[ratelimits\]\] name = "MCP_RATE_LIMIT"/] },
      ],
    },
    {
      name: 'a binding of another kind',
      bindings: [found('sessions', KV, 'MCP_SESSION'), found('rateLimit', NAMESPACE, 'MCP_RATE_LIMIT')],
      problems: [
        { subject: 'MCP_SESSION', says: [/^MCP_SESSION is bound, but not as a Durable Object namespace/] },
        { subject: 'MCP_RATE_LIMIT', says: [/^MCP_RATE_LIMIT is bound, but not as a rate limiter/] },
      ],
    },
    {
      name: "AUTH=oauth's KV missing",
      bindings: [found('oauthKv', undefined, 'OAUTH_KV')],
      problems: [
        {
          subject: 'OAUTH_KV',
          says: [
            /^OAUTH_KV is not bound \(AUTH=oauth's clients and grants: AUTH=oauth needs it\)/,
            /\[\[kv_namespaces\]\] binding = "OAUTH_KV"/,
          ],
        },
      ],
    },
    {
      name: 'the metrics dataset unbound: metrics off, no problem',
      bindings: [found('metrics', undefined, 'MCP_METRICS', false)],
      problems: [],
    },
    {
      name: 'the metrics dataset bound as something else',
      bindings: [found('metrics', KV, 'MCP_METRICS', false)],
      problems: [
        { subject: 'MCP_METRICS', says: [/not as an Analytics Engine dataset/, /or remove the MCP_METRICS binding \(metrics off\)/] },
      ],
    },
  ])('$name', ({ bindings, problems }) => {
    const found = bindingProblems(bindings);
    expect(found.map(({ subject }) => subject)).toEqual(problems.map(({ subject }) => subject));
    found.forEach(({ detail }, i) => {
      for (const says of problems[i]!.says) expect(detail).toMatch(says);
    });
  });

  it("quotes no binding's value", () => {
    const [problem] = bindingProblems([found('sessions', 'a-string-where-a-namespace-goes', 'MCP_SESSION')]);
    expect(problem!.detail).not.toContain('a-string-where-a-namespace-goes');
  });
});

describe('declarationOf', () => {
  it.each([
    ['sessions', 'S', '[[durable_objects.bindings]] name = "S" class_name = "<your class extending McpSessionObject>"'],
    ['bus', 'B', '[[durable_objects.bindings]] name = "B" class_name = "McpEventBus"'],
    ['oauthKv', 'OAUTH_KV', '[[kv_namespaces]] binding = "OAUTH_KV"'],
    ['rateLimit', 'L', '[[ratelimits]] name = "L" namespace_id = "1001" simple = { limit = 600, period = 60 }'],
    ['metrics', 'M', '[[analytics_engine_datasets]] binding = "M" dataset = "mcp_metrics"'],
  ] as const)('%s', (use, name, starts) => {
    expect(declarationOf(use, name).startsWith(starts)).toBe(true);
  });
});
