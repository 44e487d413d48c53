/**
 * A Worker serving MCP with mcp-edge-sessions: the edge Worker routes each session to its
 * Durable Object, a `DemoSession`, whose McpServer holds the tools.
 */
import { McpServer } from '@modelcontextprotocol/server';
import { createMcpWorker, McpSessionObject, sessionServerOptions, type SessionContext } from 'mcp-edge-sessions';
import { registerTools } from './tools.ts';

export class DemoSession extends McpSessionObject<Env> {
  protected override createServer(session: SessionContext): McpServer {
    const server = new McpServer({ name: 'mcp-edge-sessions-demo', version: '0.1.0' }, sessionServerOptions());
    registerTools(server, session);
    return server;
  }
}

export default createMcpWorker<Env>({ sessions: (env) => env.MCP_SESSION }) satisfies ExportedHandler<Env>;
