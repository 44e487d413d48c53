/**
 * Benchmark peer "floor": a bare Worker, no SDK, no storage. It speaks just enough MCP for the
 * benchmark (initialize, notifications, ping, tools/list, tools/call echo/progress) and answers
 * each request with the same SSE frames a real server sends, one per message. No session
 * state: the Mcp-Session-Id it issues is never checked. GET (no standalone stream, no resume)
 * is 405.
 */
import { jsonError, parseMessage, run, SseWriter, sseHeaders } from '../shared/mini-mcp.ts';

const SERVER_NAME = 'bench-floor';

export default {
  async fetch(request: Request): Promise<Response> {
    if (new URL(request.url).pathname !== '/mcp') return jsonError(404, -32000, 'Not Found');
    if (request.method === 'DELETE') return new Response(null, { status: 204 });
    if (request.method !== 'POST') {
      return new Response(null, { status: 405, headers: { Allow: 'POST, DELETE' } });
    }
    const message = parseMessage(await request.text());
    if (message === undefined) return jsonError(400, -32700, 'Parse error');
    if (message.method === undefined && !('result' in message || 'error' in message)) {
      return jsonError(400, -32600, 'Invalid Request');
    }
    if (message.method === undefined || message.id === undefined || message.id === null) {
      return new Response(null, { status: 202 }); // a notification or a response
    }
    const headers = sseHeaders();
    if (message.method === 'initialize') {
      headers.set('Mcp-Session-Id', crypto.randomUUID());
    } else if (!request.headers.has('Mcp-Session-Id')) {
      return jsonError(400, -32000, 'Bad Request: Mcp-Session-Id required', message.id);
    }
    const writer = new SseWriter();
    let seq = 0;
    run(message, SERVER_NAME, (json) => writer.send(String(++seq), json));
    writer.close();
    return new Response(writer.body, { headers });
  },
} satisfies ExportedHandler;
