/**
 * The bindings a Worker was configured to use, checked once per isolate before it serves
 * anything: each present and of the kind its use needs. "Optional" is decided where the Worker
 * is written, not by what wrangler.toml happens to bind: an accessor given to createMcpWorker
 * (`bus`, `tasks`, `principals`, `rateLimit`) is a feature asked for, and its binding missing is
 * a configuration error that names both fixes (bind it, or remove the accessor), never the
 * feature quietly off. Two bindings are read by name instead: `OAUTH_KV`, required by AUTH=oauth,
 * and `MCP_METRICS`, whose absence is the documented "metrics off" (bound, it must be a dataset).
 *
 * A binding's kind is told by what it can do, as the library calls it: a Durable Object
 * namespace has `idFromName` and `get`, a KV namespace `get` and `put`, a rate limiter `limit`,
 * an Analytics Engine dataset `writeDataPoint`.
 */
import type { ConfigProblem } from './misconfiguration.ts';

export type BindingKind = 'durable-object' | 'kv' | 'rate-limit' | 'analytics-engine';

/** What each use of a binding is, and how wrangler.toml declares it. */
export type BindingUse = 'sessions' | 'bus' | 'tasks' | 'events' | 'webhooks' | 'principals' | 'rateLimit' | 'oauthKv' | 'metrics';

interface UseSpec {
  readonly kind: BindingKind;
  /** The binding's usual name: what the fix names when the accessor reads none it could be told by. */
  readonly usualName: string;
  /** The class a Durable Object binding names: the reader's own subclass, or the library's class re-exported. */
  readonly className?: string;
  /** What the feature is, to the reader. */
  readonly purpose: string;
  /** How to do without it, where one can; absent: required. */
  readonly without?: string;
}

export const BINDING_USES: Readonly<Record<BindingUse, UseSpec>> = {
  sessions: {
    kind: 'durable-object',
    usualName: 'MCP_SESSION',
    className: '<your class extending McpSessionObject>',
    purpose: 'the sessions',
  },
  bus: {
    kind: 'durable-object',
    usualName: 'MCP_BUS',
    className: 'McpEventBus',
    purpose: 'the event bus of subscriptions/listen',
    without: "remove `bus` from createMcpWorker's options (listen events then reach only their own isolate)",
  },
  tasks: {
    kind: 'durable-object',
    usualName: 'MCP_TASKS',
    className: '<your class extending McpTaskObject>',
    purpose: 'the Tasks extension',
    without: "remove `tasks` from createMcpWorker's options (and runTask from the tools) to serve no tasks",
  },
  events: {
    kind: 'durable-object',
    usualName: 'MCP_EVENTS',
    className: 'McpEventLog',
    purpose: 'the event logs of MCP Events',
    without: "remove `events` from createMcpWorker's options (no event types are served)",
  },
  webhooks: {
    kind: 'durable-object',
    usualName: 'MCP_WEBHOOKS',
    className: '<your class extending McpWebhookSubscription>',
    purpose: 'the webhook subscriptions of MCP Events (events/subscribe)',
    without:
      'remove `webhooks` from the `events` option of createMcpWorker (events/subscribe is then not served, and no event type may offer webhook delivery)',
  },
  principals: {
    kind: 'durable-object',
    usualName: 'MCP_PRINCIPALS',
    className: 'McpPrincipalRegistry',
    purpose: 'the principal registry: bounds per principal, revocation',
    without: "remove `principals` from createMcpWorker's options (no bounds per principal, no revocation)",
  },
  rateLimit: {
    kind: 'rate-limit',
    usualName: 'MCP_RATE_LIMIT',
    purpose: 'the rate limit',
    without: "remove `rateLimit` from createMcpWorker's options (no rate limit)",
  },
  oauthKv: { kind: 'kv', usualName: 'OAUTH_KV', purpose: "AUTH=oauth's clients and grants" },
  metrics: {
    kind: 'analytics-engine',
    usualName: 'MCP_METRICS',
    purpose: 'the metrics',
    without: 'remove the MCP_METRICS binding (metrics off)',
  },
};

/** What wrangler.toml says to bind `name` for `use`. */
export function declarationOf(use: BindingUse, name: string): string {
  const spec = BINDING_USES[use];
  switch (spec.kind) {
    case 'durable-object':
      return (
        `[[durable_objects.bindings]] name = "${name}" class_name = "${spec.className}" ` +
        `(the class exported from the Worker's main module, and declared with SQLite: [exports] ${spec.className} = { type = "durable-object", storage = "sqlite" })`
      );
    case 'kv':
      return `[[kv_namespaces]] binding = "${name}" id = "<its id: npx wrangler kv namespace create ${name}>"`;
    case 'rate-limit':
      return `[[ratelimits]] name = "${name}" namespace_id = "1001" simple = { limit = 600, period = 60 }`;
    case 'analytics-engine':
      return `[[analytics_engine_datasets]] binding = "${name}" dataset = "mcp_metrics"`;
  }
}

/** What a binding of each kind can do, as the library uses it. */
const METHODS: Readonly<Record<BindingKind, readonly string[]>> = {
  'durable-object': ['idFromName', 'get'],
  kv: ['get', 'put'],
  'rate-limit': ['limit'],
  'analytics-engine': ['writeDataPoint'],
};

/** Whether `value` can be used as a binding of `kind`. */
export function isBindingOfKind(value: unknown, kind: BindingKind): boolean {
  if ((typeof value !== 'object' && typeof value !== 'function') || value === null) return false;
  const binding = value as Record<string, unknown>;
  return METHODS[kind].every((method) => typeof binding[method] === 'function');
}

/** One binding as the Worker found it. */
export interface FoundBinding {
  readonly use: BindingUse;
  /** The env key its accessor read (`env.MCP_TASKS`: `MCP_TASKS`), or undefined where it read none. */
  readonly name: string | undefined;
  /** What the accessor answered (undefined: nothing bound under that name). */
  readonly value: unknown;
  /** Whether the binding is required (an accessor given; OAUTH_KV under AUTH=oauth), or only checked if present (MCP_METRICS). */
  readonly required: boolean;
}

/** The problems of the bindings found: each missing one, each of another kind. Pure. */
export function bindingProblems(found: readonly FoundBinding[]): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  for (const { use, name, value, required } of found) {
    const spec = BINDING_USES[use];
    const shown = name ?? spec.usualName;
    const fix = `add to wrangler.toml ${declarationOf(use, shown)}`;
    const alternative = spec.without === undefined ? '' : `; or ${spec.without}`;
    const asked = name === undefined ? 'it' : shown;
    const option =
      use === 'oauthKv'
        ? 'AUTH=oauth needs it'
        : use === 'metrics'
          ? 'bound, it is written to'
          : `createMcpWorker's \`${use}\` reads ${asked}`;
    if (value === undefined || value === null) {
      if (!required) continue;
      problems.push({ subject: shown, detail: `${shown} is not bound (${spec.purpose}: ${option}): ${fix}${alternative}` });
    } else if (!isBindingOfKind(value, spec.kind)) {
      problems.push({
        subject: shown,
        detail: `${shown} is bound, but not as ${KIND_NAMES[spec.kind]} (${spec.purpose}: ${option}): ${fix}${alternative}`,
      });
    }
  }
  return problems;
}

const KIND_NAMES: Readonly<Record<BindingKind, string>> = {
  'durable-object': 'a Durable Object namespace',
  kv: 'a KV namespace',
  'rate-limit': 'a rate limiter',
  'analytics-engine': 'an Analytics Engine dataset',
};
