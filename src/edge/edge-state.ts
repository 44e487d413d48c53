/**
 * What the Worker derives from one environment, once per isolate (a WeakMap by the env
 * object): the configuration checked whole — its variables (config.ts, the request-state keys
 * where a modern factory is served) and every binding the Worker was given an accessor for,
 * each present and of its kind (core/binding-check.ts) — and, if it holds, the state every
 * request uses: the configuration, the authenticator, the object namespaces (each placed as
 * DO_JURISDICTION and DO_LOCATION_HINT say, core/placement.ts, and behind its storage guard,
 * storage-guard.ts), the rate limiter, the isolate's stream shares. A jurisdiction the runtime
 * refuses (a local workerd has none) is found here, as the configuration error that says so.
 *
 * A configuration that does not hold is one MisconfiguredError naming every problem found and
 * each fix, logged once (`mcp.config.error`, a line per problem), and answered to every request,
 * on every path, by the Worker's fetch before anything else runs (AUTH=oauth's front included:
 * its walls read the configuration too). Each binding is read once, through a watching proxy,
 * so that the fix names the key its accessor reads (`env.MCP_TASKS`: `MCP_TASKS`).
 */
import type { McpHttpHandler } from '@modelcontextprotocol/server';
import { authenticator, type Authenticator } from '../auth/authenticate.ts';
import { readConfig, type TransportConfig } from '../config.ts';
import { bindingProblems, BINDING_USES, type BindingUse, type FoundBinding, isBindingOfKind } from '../core/binding-check.ts';
import { log } from '../core/log.ts';
import { MisconfiguredError, variableProblem, type ConfigProblem } from '../core/misconfiguration.ts';
import { type PlaceableNamespace, type Placement, placeNamespace, readPlacement, UNPLACED } from '../core/placement.ts';
import type { PrincipalRegistryNamespace } from '../principals/principal-registry.ts';
import { EventCatalog } from '../events/event-catalog.ts';
import type { EventLogNamespace } from '../events/event-logs.ts';
import type { EventType } from '../events/event-type.ts';
import { readWebhookConfig } from '../events/webhook-config.ts';
import type { WebhookNamespace } from '../events/webhook-subscriptions.ts';
import type { DurableEventBus } from '../stateless/event-bus.ts';
import { requestStateSeal } from '../stateless/request-state.ts';
import { type FetchNamespace, StorageGuard } from './storage-guard.ts';
import { StreamShares } from './stream-shares.ts';

/** The accessors createMcpWorker was given: each one a binding it needs. */
export interface WorkerBindings<E> {
  readonly sessions: (env: E) => FetchNamespace;
  readonly bus?: ((env: E) => FetchNamespace) | undefined;
  readonly tasks?: ((env: E) => FetchNamespace) | undefined;
  readonly principals?: ((env: E) => PrincipalRegistryNamespace) | undefined;
  readonly rateLimit?: ((env: E) => RateLimit) | undefined;
  readonly events?:
    | {
        readonly types: readonly EventType[];
        readonly logs: (env: E) => EventLogNamespace;
        readonly webhooks?: ((env: E) => WebhookNamespace) | undefined;
      }
    | undefined;
  /** Whether a modern factory is served (its requestState keys are then read). */
  readonly modern: boolean;
}

export interface EdgeState {
  readonly config: TransportConfig;
  readonly authenticate: Authenticator;
  readonly sessions: FetchNamespace;
  readonly tasks: FetchNamespace | undefined;
  readonly busObjects: FetchNamespace | undefined;
  readonly principals: PrincipalRegistryNamespace | undefined;
  readonly rateLimit: RateLimit | undefined;
  /** The event types served and the namespace of their logs (MCP Events), where the Worker has them; their webhook subscriptions', where it has those. */
  readonly events:
    | { readonly catalog: EventCatalog; readonly logs: EventLogNamespace; readonly webhooks: EdgeWebhooks | undefined }
    | undefined;
  /** The listens and relayed streams this isolate holds, per principal (stream-shares.ts). */
  readonly shares: StreamShares;
  /** The modern endpoint, once first needed. */
  modern?: McpHttpHandler;
  /** The event bus, once first needed: one per isolate, so its listeners are dealt to the shards in turn. */
  bus?: DurableEventBus | undefined;
}

/** The webhook subscriptions' namespace, and the env keys a subscription's object reaches its log and itself by (`WebhookCreate.bindings`). */
export interface EdgeWebhooks {
  readonly namespace: WebhookNamespace;
  readonly bindings: { readonly logs: string; readonly webhooks: string };
}

/** What an object class is, in a fix's words: `your class extending McpTaskObject`, `McpEventBus`. */
const roleOf = (use: 'sessions' | 'bus' | 'tasks' | 'principals') => BINDING_USES[use].className!.replace(/^<(.*)>$/, '$1');

/** The edge state of each environment: built once, or the MisconfiguredError every request is answered with (thrown). */
export function edgeStates<E extends object>(bindings: WorkerBindings<E>, path: string): (env: E) => EdgeState {
  const states = new WeakMap<E, EdgeState | MisconfiguredError>();
  return (env) => {
    let state = states.get(env);
    if (state === undefined) {
      state = checkedState(env, bindings, path);
      states.set(env, state);
    }
    if (state instanceof MisconfiguredError) throw state;
    return state;
  };
}

function checkedState<E extends object>(env: E, bindings: WorkerBindings<E>, path: string): EdgeState | MisconfiguredError {
  const problems: ConfigProblem[] = [];
  let config: TransportConfig | undefined;
  let placement: Placement = UNPLACED;
  try {
    config = readConfig(env);
    if (bindings.modern) requestStateSeal(env);
  } catch (error) {
    problems.push(variableProblem(error));
    if (!String(error).includes('configuration: ')) log({ msg: 'mcp.worker.error', error: String(error) });
  }
  try {
    placement = readPlacement(env);
  } catch (error) {
    problems.push(variableProblem(error));
  }
  const found = new Map<BindingUse, { name: string | undefined; value: unknown }>();
  const read = (use: BindingUse, accessor: ((env: E) => unknown) | undefined) => {
    if (accessor === undefined) return;
    const binding = readBinding(accessor, env);
    if (binding === undefined) {
      problems.push({ subject: use, detail: `createMcpWorker's \`${use}\` threw when given the environment (the error is in the log)` });
      return;
    }
    found.set(use, binding);
  };
  read('sessions', bindings.sessions);
  read('bus', bindings.bus);
  read('tasks', bindings.tasks);
  read('principals', bindings.principals);
  read('rateLimit', bindings.rateLimit);
  read('events', bindings.events?.logs);
  read('webhooks', bindings.events?.webhooks);
  problems.push(...webhookProblems(env, bindings.events));
  const named = env as { OAUTH_KV?: unknown; MCP_METRICS?: unknown; AUTH?: unknown };
  const checked: FoundBinding[] = [...found].map(([use, { name, value }]) => ({ use, name, value, required: true }));
  // AUTH=oauth's provider reads OAUTH_KV by that name; read as the configuration reads AUTH, so a
  // malformed AUTH is reported once, as itself.
  if (typeof named.AUTH === 'string' && named.AUTH.trim() === 'oauth') {
    checked.push({ use: 'oauthKv', name: 'OAUTH_KV', value: named.OAUTH_KV, required: true });
  }
  checked.push({ use: 'metrics', name: 'MCP_METRICS', value: named.MCP_METRICS, required: false });
  problems.push(...bindingProblems(checked));
  // Every Durable Object binding placed once, here. The runtime's refusal of the jurisdiction is a
  // problem like any other, said once (it would be the same for every binding).
  const placed = new Map<BindingUse, unknown>();
  for (const [use, { name, value }] of found) {
    if (BINDING_USES[use].kind !== 'durable-object' || !isBindingOfKind(value, 'durable-object')) continue;
    try {
      placed.set(use, placeNamespace(value as PlaceableNamespace, placement, name ?? BINDING_USES[use].usualName));
    } catch (error) {
      if (!(error instanceof MisconfiguredError)) throw error;
      problems.push(...error.problems);
      if (error.problems.some(({ subject }) => subject === 'DO_JURISDICTION')) break;
    }
  }
  if (problems.length > 0 || config === undefined) {
    for (const { subject, detail } of problems) log({ msg: 'mcp.config.error', subject, error: detail });
    return new MisconfiguredError(problems);
  }
  const guarded = (use: 'sessions' | 'bus' | 'tasks' | 'principals') => {
    const binding = found.get(use);
    return binding === undefined ? undefined : new StorageGuard(binding.name ?? BINDING_USES[use].usualName, roleOf(use));
  };
  const namespace = (use: 'sessions' | 'bus' | 'tasks') => {
    const value = placed.get(use) as FetchNamespace | undefined;
    return value === undefined ? undefined : guarded(use)!.namespace(value);
  };
  const registry = placed.get('principals') as PrincipalRegistryNamespace | undefined;
  const logs = placed.get('events') as EventLogNamespace | undefined;
  const webhooks = placed.get('webhooks') as WebhookNamespace | undefined;
  const bindingName = (use: 'events' | 'webhooks') => found.get(use)?.name ?? BINDING_USES[use].usualName;
  return {
    config,
    authenticate: authenticator(config.auth, path),
    sessions: namespace('sessions')!,
    tasks: namespace('tasks'),
    busObjects: namespace('bus'),
    principals: registry === undefined ? undefined : guarded('principals')!.registry(registry),
    rateLimit: found.get('rateLimit')?.value as RateLimit | undefined,
    events:
      logs === undefined
        ? undefined
        : {
            catalog: new EventCatalog(bindings.events!.types, { tasks: bindings.tasks !== undefined }),
            logs,
            webhooks:
              webhooks === undefined
                ? undefined
                : { namespace: webhooks, bindings: { logs: bindingName('events'), webhooks: bindingName('webhooks') } },
          },
    shares: new StreamShares(config),
  };
}

/**
 * Webhook delivery asked for and not given its objects, or given them with WEBHOOK_* variables
 * that do not parse: an event type that lists `webhook` in its `delivery` needs `webhooks` (its
 * subscriptions are objects of that class), and the variables are read up front, as every other.
 */
function webhookProblems<E extends object>(env: E, events: WorkerBindings<E>['events']): ConfigProblem[] {
  if (events === undefined) return [];
  if (events.webhooks === undefined) {
    return events.types
      .filter((type) => type.offers('webhook'))
      .map((type) => ({
        subject: type.name,
        detail:
          `event type ${type.name} lists webhook in its delivery, but createMcpWorker's \`events\` has no \`webhooks\`: ` +
          `add \`webhooks: (env) => env.${BINDING_USES.webhooks.usualName}\` (a class extending McpWebhookSubscription, bound and declared with SQLite), ` +
          `or remove 'webhook' from ${type.name}'s delivery`,
      }));
  }
  try {
    readWebhookConfig(env);
    return [];
  } catch (error) {
    return [variableProblem(error)];
  }
}

/**
 * What `accessor` answers for `env`, and the last key it read of it (the binding's name), or
 * undefined if it threw (logged: its message is the application's, and may quote anything).
 */
function readBinding<E extends object>(accessor: (env: E) => unknown, env: E): { name: string | undefined; value: unknown } | undefined {
  const keys: string[] = [];
  const watched = new Proxy(env, {
    get(target, key) {
      if (typeof key === 'string') keys.push(key);
      return Reflect.get(target, key);
    },
  });
  try {
    const value = accessor(watched);
    return { name: keys.at(-1), value };
  } catch (error) {
    log({ msg: 'mcp.worker.error', error: `a binding accessor threw: ${String(error)}` });
    return undefined;
  }
}
