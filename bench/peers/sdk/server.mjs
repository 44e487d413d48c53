/**
 * Benchmark peer "sdk": the official MCP TypeScript SDK v1 (@modelcontextprotocol/sdk 1.29.0,
 * installed in bench/ under the npm alias `mcp-sdk-1.29.0` because agents 0.32.0 needs 1.32.2
 * under the real name) on node:http: McpServer + StreamableHTTPServerTransport with stateful
 * sessions and the SDK's own example InMemoryEventStore (resumability), wired as in the SDK's
 * simpleStreamableHttp example. Usage: node server.mjs <port>   (listens on 127.0.0.1)
 */
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { McpServer } from 'mcp-sdk-1.29.0/server/mcp.js';
import { StreamableHTTPServerTransport } from 'mcp-sdk-1.29.0/server/streamableHttp.js';
import { isInitializeRequest } from 'mcp-sdk-1.29.0/types.js';
import { InMemoryEventStore } from 'mcp-sdk-1.29.0/examples/shared/inMemoryEventStore.js';
import * as z from 'zod';

const port = Number(process.argv[2] ?? process.env.PORT ?? 8790);

function createMcpServer() {
  const server = new McpServer({ name: 'bench-sdk', version: '0.0.0' });
  server.registerTool('echo', { description: 'Returns its text.', inputSchema: { text: z.string() } }, async ({ text }) => ({
    content: [{ type: 'text', text }],
  }));
  server.registerTool(
    'progress',
    {
      description: 'Sends n progress notifications as fast as possible, then returns "done <n>".',
      inputSchema: { n: z.number().int().min(0).max(1_000_000) },
    },
    async ({ n }, extra) => {
      const progressToken = extra._meta?.progressToken;
      if (progressToken !== undefined) {
        for (let progress = 1; progress <= n; progress++) {
          await extra.sendNotification({ method: 'notifications/progress', params: { progressToken, progress, total: n } });
        }
      }
      return { content: [{ type: 'text', text: `done ${n}` }] };
    },
  );
  return server;
}

/** Session id → transport, as in the SDK example. */
const transports = new Map();

function jsonError(res, status, code, message) {
  res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code, message } }));
}

async function readBody(req) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  return Buffer.concat(chunks).toString('utf8');
}

const httpServer = createServer(async (req, res) => {
  try {
    if (new URL(req.url ?? '/', 'http://127.0.0.1').pathname !== '/mcp') return jsonError(res, 404, -32000, 'Not Found');
    let body;
    if (req.method === 'POST') {
      try {
        body = JSON.parse(await readBody(req));
      } catch {
        return jsonError(res, 400, -32700, 'Parse error');
      }
    }
    const sessionId = req.headers['mcp-session-id'];
    let transport = typeof sessionId === 'string' ? transports.get(sessionId) : undefined;
    if (transport === undefined) {
      if (sessionId !== undefined) return jsonError(res, 404, -32001, 'Session not found');
      if (req.method !== 'POST' || !isInitializeRequest(body)) {
        return jsonError(res, 400, -32000, 'Bad Request: No valid session ID provided');
      }
      const created = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        eventStore: new InMemoryEventStore(),
        onsessioninitialized: (id) => transports.set(id, created),
      });
      created.onclose = () => {
        if (created.sessionId !== undefined) transports.delete(created.sessionId);
      };
      await createMcpServer().connect(created);
      transport = created;
    }
    await transport.handleRequest(req, res, body);
  } catch (error) {
    console.error('bench-sdk: request failed', error);
    if (!res.headersSent) jsonError(res, 500, -32603, 'Internal error');
  }
});

httpServer.listen(port, '127.0.0.1', () => console.log(`bench-sdk listening on http://127.0.0.1:${port}/mcp`));

for (const signal of ['SIGTERM', 'SIGINT']) {
  process.on(signal, () => {
    httpServer.closeAllConnections();
    httpServer.close(() => process.exit(0));
    setTimeout(() => process.exit(0), 2000).unref();
  });
}
