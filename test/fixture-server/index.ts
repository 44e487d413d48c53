/**
 * The demo session object: an McpServer with the demo tools and the conformance suite's
 * fixtures. Your own server looks the same — subclass McpSessionObject and build an
 * McpServer with your tools in createServer().
 */
import { McpServer } from '@modelcontextprotocol/server';
import { McpSessionObject, type SessionContext } from '../session/session-object.ts';
import { sessionServerOptions } from '../session/server-options.ts';
import { conformanceCapabilities, registerConformanceFixtures } from './conformance-fixtures.ts';
import { registerDemoTools } from './tools.ts';

export class DemoSession extends McpSessionObject<Env> {
  protected override createServer(session: SessionContext): McpServer {
    const server = new McpServer(
      { name: 'mcp-edge-sessions-demo', version: '0.1.0' },
      sessionServerOptions({ capabilities: conformanceCapabilities }),
    );
    registerDemoTools(server, session);
    registerConformanceFixtures(server);
    return server;
  }
}
