// A loopback HTTP proxy that breaks connections on purpose, for the soak (scripts/faults/soak.mjs):
// 127.0.0.1 only, seeded (the same seed replays the same faults for the same traffic), each
// fault decided per response. Profiles:
//   bytes      cut an SSE response at a random byte offset (the client sees its body end early)
//   first      cut a response before its first event (after the headers, before any body byte)
//   half-open  stop forwarding to the client and close it, but keep reading the server's side
//              to its end (the server does not learn the client left until it writes)
//   reset      destroy the client socket with a TCP reset at a random byte offset
//   delay      hold each chunk 0–50 ms (no cut)
// `rate` is the share of SSE responses that are faulted (0.3 = 30%). The handshake (a request
// without a session id: `initialize`) is faulted only with `handshakes: true`.
import http from 'node:http';
import { seededRandom } from '../../test/support/seeded-random.ts';

export function startFaultProxy({ target, profile, rate = 0.3, seed = 1, handshakes = false }) {
  const next = seededRandom(seed);
  const stats = { responses: 0, faulted: 0 };
  const upstream = new URL(target);
  const server = http.createServer((request, response) => {
    const forwarded = http.request(
      {
        host: upstream.hostname,
        port: upstream.port,
        path: request.url,
        method: request.method,
        headers: { ...request.headers, host: upstream.host },
      },
      (answer) => {
        stats.responses++;
        const sse = (answer.headers['content-type'] ?? '').startsWith('text/event-stream');
        const spared = !handshakes && request.headers['mcp-session-id'] === undefined;
        const fault = sse && !spared && profile !== 'none' && next() < rate ? profile : 'none';
        if (fault !== 'none' && fault !== 'delay') stats.faulted++;
        response.writeHead(answer.statusCode ?? 502, answer.headers);
        if (fault === 'first') {
          response.flushHeaders();
          answer.destroy();
          response.socket?.destroy();
          return;
        }
        let budget = fault === 'bytes' || fault === 'half-open' || fault === 'reset' ? Math.floor(next() * 2048) : Number.POSITIVE_INFINITY;
        let cut = false;
        answer.on('data', async (chunk) => {
          if (cut) return; // half-open: the server's side is read to its end, nothing forwarded
          if (fault === 'delay') {
            answer.pause();
            await new Promise((resolve) => setTimeout(resolve, Math.floor(next() * 50)));
            answer.resume();
          }
          if (chunk.length < budget) {
            budget -= chunk.length;
            response.write(chunk);
            return;
          }
          response.write(chunk.subarray(0, budget));
          cut = true;
          if (fault === 'reset') response.socket?.resetAndDestroy();
          else response.socket?.destroy();
          if (fault !== 'half-open') answer.destroy();
        });
        answer.on('end', () => !cut && response.end());
        answer.on('error', () => response.socket?.destroy());
      },
    );
    forwarded.on('error', () => response.socket?.destroy());
    request.pipe(forwarded);
    response.on('close', () => {
      // A client that left takes its request with it, unless the fault keeps the server's side open.
      if (profile !== 'half-open') forwarded.destroy();
    });
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      resolve({
        url: `http://127.0.0.1:${port}${upstream.pathname}`,
        stats,
        close: () => new Promise((done) => server.close(() => done())),
        closeAll: () => server.closeAllConnections(),
      });
    });
  });
}
