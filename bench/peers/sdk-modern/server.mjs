/**
 * Benchmark peer "sdk-modern": the official MCP TypeScript SDK v2's own 2026-07-28 entry
 * (@modelcontextprotocol/server 2.4.0, `createMcpHandler`, a fresh McpServer per request, its
 * in-process listen bus) on node:http, for M1–M3. Legacy requests are served by the SDK's
 * stateless fallback (no sessions). The Node request is turned into a web `Request` and the
 * web `Response` streamed back. Usage: node server.mjs <port>   (listens on 127.0.0.1)
 */
import { createServer } from 'node:http';
import { Readable } from 'node:stream';
import { createMcpHandler, McpServer } from '@modelcontextprotocol/server';
// TypeScript, run by Node's own type stripping (Node 24, as the benchmark runs).
import { registerModernTools } from '../shared/modern-tools.ts';

const port = Number(process.argv[2] ?? process.env.PORT ?? 8791);

const handler = createMcpHandler(() => {
  const server = new McpServer({ name: 'bench-sdk-modern', version: '0.0.0' });
  registerModernTools(server, {
    changed: async () => {
      handler.notify.toolsChanged();
      return { content: [{ type: 'text', text: 'changed' }] };
    },
  });
  return server;
});

createServer(async (req, res) => {
  const abort = new AbortController();
  res.on('close', () => abort.abort());
  const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
  const request = new Request(`http://${req.headers.host ?? '127.0.0.1'}${req.url}`, {
    method: req.method,
    headers: Object.entries(req.headers).flatMap(([name, value]) => (Array.isArray(value) ? value.map((v) => [name, v]) : [[name, value]])),
    body: hasBody ? Readable.toWeb(req) : undefined,
    duplex: hasBody ? 'half' : undefined,
    signal: abort.signal,
  });
  try {
    const response = await handler.fetch(request);
    res.writeHead(response.status, Object.fromEntries(response.headers));
    if (response.body === null) return res.end();
    for await (const chunk of response.body) res.write(chunk);
    res.end();
  } catch (error) {
    if (!res.headersSent) res.writeHead(500);
    res.end(String(error));
  }
}).listen(port, '127.0.0.1', () => console.log(`ready http://127.0.0.1:${port}/mcp`));
