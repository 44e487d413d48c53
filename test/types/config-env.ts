/**
 * Type-level checks, compiled by `npm run typecheck` (tsc -p test), never run: the Env types a
 * user's Worker may give the library. Each `@ts-expect-error` fails the build if its line
 * compiles, so the refusals are checked as much as the acceptances.
 */
import type { McpServer } from '@modelcontextprotocol/server';
import { createMcpWorker, McpSessionObject, McpTaskObject, type ModernContext, type SessionContext } from '../../src/lib.ts';

/** A Worker with bindings only, no [vars]: every variable has its default (TS2559 before ConfigEnv). */
interface BindingsOnly {
  MCP_SESSION: DurableObjectNamespace;
  MCP_TASKS: DurableObjectNamespace;
}

/** A Worker with some vars, as `wrangler types` writes them (strings). */
interface WithVars extends BindingsOnly {
  SESSION_TTL_MS: string;
  ALLOWED_HOSTS: string;
}

/** A var of the wrong type. */
interface WrongVar extends BindingsOnly {
  SESSION_TTL_MS: number;
}

export class BindingsOnlySessions extends McpSessionObject<BindingsOnly> {
  protected override createServer(_session: SessionContext): McpServer {
    throw new Error('a type check, never run');
  }
}

export class WithVarsTasks extends McpTaskObject<WithVars> {
  protected override createServer(_context: ModernContext): McpServer {
    throw new Error('a type check, never run');
  }
}

export const bindingsOnly = createMcpWorker<BindingsOnly>({ sessions: (env) => env.MCP_SESSION });
export const withVars = createMcpWorker<WithVars>({ sessions: (env) => env.MCP_SESSION, tasks: (env) => env.MCP_TASKS });
// @ts-expect-error SESSION_TTL_MS is read as a string
export const wrongVar = createMcpWorker<WrongVar>({ sessions: (env) => env.MCP_SESSION });
// @ts-expect-error the same for the session object
export abstract class WrongVarSessions extends McpSessionObject<WrongVar> {}
