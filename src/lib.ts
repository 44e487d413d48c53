/**
 * mcp-edge-sessions: fork-proof MCP Streamable HTTP sessions on Cloudflare Durable Objects.
 * What a user's Worker imports: the edge Worker (`createMcpWorker`), the session object to
 * subclass and the options its McpServer needs, the task object and `runTask`, the event bus
 * object, the principal registry (bounds per principal, revocation), the wire's header names and codes, and the types around them. Everything else is
 * internal.
 */
export { createMcpWorker, type McpWorkerOptions } from './edge/worker.ts';
export type { SessionNamespace } from './edge/session-route.ts';
export type { ModernContext, ModernServerFactory } from './stateless/modern-endpoint.ts';
export { McpEventBus } from './stateless/bus-object.ts';
export { busShardName, busShardSockets } from './stateless/event-bus.ts';
export type { RequestStateSeal } from './stateless/request-state.ts';
export { McpTaskObject } from './tasks/task-object.ts';
export { McpEventLog } from './events/event-log-object.ts';
export { McpWebhookSubscription } from './events/webhook-object.ts';
export {
  defineEventType,
  EventEmitError,
  EventType,
  MAX_EVENT_DATA_BYTES,
  type Emission,
  type EventTypeDefinition,
} from './events/event-type.ts';
export {
  defineUpstreamEventType,
  UpstreamEventType,
  type UpstreamEventTypeDefinition,
  type UpstreamOccurrence,
  type UpstreamPage,
  type UpstreamReadRequest,
} from './events/upstream-event-type.ts';
export { DEFAULT_RETENTION, type Retention } from './events/event-retention.ts';
export { resetEventLog } from './events/event-logs.ts';
export type { EventLogNamespace } from './events/event-logs.ts';
export { emitTaskEvent, runTask, type RunTaskOptions, type ToolOutcome } from './tasks/run-task.ts';
export type { TaskNamespace } from './tasks/task-directory.ts';
export { McpSessionObject } from './session/session-object.ts';
export { McpPrincipalRegistry, type PrincipalRegistryNamespace } from './principals/principal-registry.ts';
// A namespace as the library addresses its objects (DO_JURISDICTION, DO_LOCATION_HINT): for a Worker's own code reaching one.
export { placedNamespace } from './edge/placement.ts';
export { PrincipalControl, type ControlBindings, type Revocation } from './principals/principal-control.ts';
export type { Holding, HoldingKind } from './core/holdings.ts';
export type { SessionContext } from './session/session-context.ts';
export type { Principal } from './auth/principal.ts';
export type { GrantProps } from './auth/authenticate.ts';
export type { OAuthOptions } from './auth/oauth-server.ts';
// For a deployment's own consent page (AUTH=oauth): grant only the scopes the server supports.
export { grantScopes, type ScopeGrant } from './auth/grant-scopes.ts';
export { sessionServerOptions } from './session/server-options.ts';
export type { ConfigEnv, ConfigVars, ResponseMode, TransportConfig } from './config.ts';
export type { LogEvent } from './core/log.ts';
export type { MetricEvent } from './core/metrics.ts';
export type { MetricsDataset } from './metrics/metrics.ts';
export { HEADERS, JsonRpcCode } from './core/wire.ts';
export type { ErrorData, RefusalReason } from './core/errors.ts';
export { SUPPORTED_PROTOCOL_VERSIONS, type ProtocolVersion } from './core/protocol-version.ts';
