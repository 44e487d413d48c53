/**
 * A deployment that cannot work as configured says so, on the wire and once in the log, in
 * words that name what is wrong and how to fix it — never a bare `Internal error` with the
 * cause in the log only, and never a feature quietly off. Three kinds of problem end here:
 * - a variable (config.ts, auth/auth-config.ts and the sign-in settings throw `configuration: …`);
 * - a binding the Worker was given an accessor for, missing or of another kind (binding-check.ts);
 * - a Durable Object class without SQLite storage, which workerd reveals only where the object
 *   first touches its storage ({@link isSqlUnavailable}).
 * Every one is a {@link MisconfiguredError}: 500, -32603, `server misconfigured: …`, through
 * errorResponse() like any refusal. Its text is sent to whoever asks (the walls themselves may be
 * what is misconfigured), so it names variables and bindings, never a value that may be a secret.
 */
import { McpHttpError, type JsonRpcId } from './errors.ts';
import { JsonRpcCode } from './wire.ts';

/** One thing wrong: what it concerns (a variable, a binding, a class) and what to do, in one sentence or two. */
export interface ConfigProblem {
  /** A binding's or variable's name, or `[vars]` for a variable error (it names its variable itself). */
  readonly subject: string;
  /** What is wrong and the fix. */
  readonly detail: string;
}

/** The start of every misconfiguration's message, what a client or an operator may look for. */
export const MISCONFIGURED = 'server misconfigured';

export class MisconfiguredError extends McpHttpError {
  constructor(
    readonly problems: readonly ConfigProblem[],
    id: JsonRpcId | null = null,
  ) {
    super(500, JsonRpcCode.InternalError, misconfiguredMessage(problems), undefined, id);
  }
}

/** One message for all the problems found: each is fixed before the deployment serves anything. */
export function misconfiguredMessage(problems: readonly ConfigProblem[]): string {
  if (problems.length === 1) return `${MISCONFIGURED}: ${problems[0]!.detail}`;
  return `${MISCONFIGURED}, ${problems.length} problems: ${problems.map(({ detail }, i) => `(${i + 1}) ${detail}`).join(' ')}`;
}

/**
 * A variable's configuration error (an Error whose message starts `configuration: `, as every
 * one thrown by config.ts and the modules it reads does) as a problem. Anything else thrown while
 * reading the configuration is a bug whose message may quote a value: the client is told only
 * that the configuration could not be read, and the log has the error.
 */
export function variableProblem(error: unknown): ConfigProblem {
  const message = error instanceof Error ? error.message : '';
  if (message.startsWith('configuration: ')) return { subject: '[vars]', detail: message.slice('configuration: '.length) };
  return { subject: '[vars]', detail: 'the configuration could not be read (the cause is in the log)' };
}

/**
 * Whether `error` is workerd's refusal of storage to a Durable Object whose class is not
 * declared with SQLite (`storage = "legacy-kv"`, or not declared at all): `ctx.storage.sql`'s
 * and `ctx.storage.kv`'s. The class is fixed at deploy time, so the refusal never passes.
 */
export function isSqlUnavailable(error: unknown): boolean {
  const message = error instanceof Error ? error.message : typeof error === 'string' ? error : '';
  return SQL_UNAVAILABLE.some((start) => message.includes(start));
}

/** How workerd (1.2026) words each refusal; a rewording makes it an internal error again, logged, never hidden. */
const SQL_UNAVAILABLE = [
  'SQL is not enabled for this Durable Object class',
  'API is only available for SQLite-backed Durable Objects',
] as const;

/** The fix for a class without SQLite storage, bound as `binding` (`role`: what the class is, to the reader). */
export function sqlProblem(binding: string, role: string): ConfigProblem {
  return {
    subject: binding,
    detail:
      `the Durable Object class bound as ${binding} (${role}) has no SQLite storage (workerd: "SQL is not enabled for this Durable Object class"). ` +
      `Declare the class with SQLite in wrangler.toml: [exports] <its class_name> = { type = "durable-object", storage = "sqlite" }; ` +
      `a deployment still on [[migrations]]: a new tag with new_sqlite_classes = ["<its class_name>"]. ` +
      'A class already deployed with key-value storage cannot be converted: bind a new class (a subclass under another name) declared with SQLite',
  };
}

/**
 * A tool that calls runTask, in a Worker given no `tasks`, for a request that declared the Tasks
 * extension (or a tool that runs only as a task): a task wanted on both sides, and only the
 * Worker's configuration in the way. `declaration`: how wrangler.toml binds the task class.
 */
export function unservedTaskProblem(tool: string | undefined, declaration: string): ConfigProblem {
  const which = tool === undefined ? 'the tool' : `the tool ${JSON.stringify(tool)}`;
  return {
    subject: 'tasks',
    detail:
      `${which} runs as a task (runTask), and the request declares the Tasks extension or the tool runs only as a task, but this Worker serves no tasks: ` +
      `pass \`tasks: (env) => env.MCP_TASKS\` to createMcpWorker and add to wrangler.toml ${declaration}; or call the tool's work without runTask`,
  };
}
