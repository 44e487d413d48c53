/**
 * A webhook receiver on 127.0.0.1 that tests and fault scripts control: it records every request
 * it is sent and answers each as told, so a test can see exactly what the server POSTed (headers,
 * body, the order of verification and deliveries) and make the endpoint misbehave in each way the
 * text's delivery rules cover. It verifies nothing itself: whoever reads the log checks
 * signatures with the library's own verifier, so this file cannot hide a bad signature.
 *
 * Endpoints are paths: `/hook/<name>` (and anything under it) is endpoint `<name>`. Its script is
 * set with `PUT /_control/<name>` and a JSON body `{ script?: Behaviour[], otherwise?: Behaviour }`:
 * each request takes the next behaviour of `script`, then `otherwise` (default `{kind: "ok"}`).
 * Behaviours:
 * - `{kind: "ok"}`: 200; a verification envelope is answered with its challenge echoed;
 * - `{kind: "wrong"}`: 200 with a body that is not the echo (`{"challenge":"wrong"}`);
 * - `{kind: "status", status}`: that status, empty body;
 * - `{kind: "redirect", status?, location}`: a 3xx (307 unless told) to `location`;
 * - `{kind: "slow", delayMs, then?}`: waits, then behaves as `then` (default ok);
 * - `{kind: "drop"}`: reads the request, records it, then destroys the socket unanswered (an
 *   acknowledgement lost in flight, as far as the sender can tell);
 * - `{kind: "big", bytes}`: 200 with a body of that many bytes.
 * `GET /_log/<name>` answers the endpoint's records, oldest first:
 * `{at, method, path, headers, body, answered}` (`answered`: the status, or "dropped");
 * `DELETE /_log/<name>` forgets them and the script.
 */
import { createServer } from 'node:http';

/** Starts a receiver; resolves with its origin (`http://127.0.0.1:<port>`) and `close()`. */
export async function startWebhookReceiver({ port = 0 } = {}) {
  const endpoints = new Map();
  const endpoint = (name) => {
    let state = endpoints.get(name);
    if (state === undefined) {
      state = { script: [], otherwise: { kind: 'ok' }, log: [] };
      endpoints.set(name, state);
    }
    return state;
  };
  const server = createServer(async (request, response) => {
    const chunks = [];
    for await (const chunk of request) chunks.push(chunk);
    const body = Buffer.concat(chunks).toString('utf8');
    const url = new URL(request.url, 'http://receiver');
    const [, area, name] = url.pathname.split('/');
    if (area === '_control' && request.method === 'PUT') {
      const { script = [], otherwise = { kind: 'ok' } } = JSON.parse(body || '{}');
      Object.assign(endpoint(name), { script: [...script], otherwise });
      return answer(response, 204);
    }
    if (area === '_log' && request.method === 'GET') return answer(response, 200, JSON.stringify(endpoint(name).log));
    if (area === '_log' && request.method === 'DELETE') {
      endpoints.delete(name);
      return answer(response, 204);
    }
    if (area !== 'hook' || name === undefined) return answer(response, 404);
    const state = endpoint(name);
    const record = { at: Date.now(), method: request.method, path: url.pathname, headers: request.headers, body, answered: null };
    state.log.push(record);
    await behave(state.script.shift() ?? state.otherwise, body, request, response, record);
  });
  await new Promise((resolve) => server.listen(port, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${server.address().port}`;
  return {
    origin,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
    server,
  };
}

async function behave(behaviour, body, request, response, record) {
  switch (behaviour.kind) {
    case 'ok': {
      const challenge = challengeOf(body);
      record.answered = 200;
      return challenge === undefined ? answer(response, 200) : answer(response, 200, JSON.stringify({ challenge }));
    }
    case 'wrong':
      record.answered = 200;
      return answer(response, 200, JSON.stringify({ challenge: 'wrong' }));
    case 'status':
      record.answered = behaviour.status;
      return answer(response, behaviour.status);
    case 'redirect':
      record.answered = behaviour.status ?? 307;
      response.writeHead(record.answered, { location: behaviour.location });
      return response.end();
    case 'slow':
      await new Promise((resolve) => setTimeout(resolve, behaviour.delayMs));
      if (request.socket.destroyed) {
        record.answered = 'gone';
        return;
      }
      return behave(behaviour.then ?? { kind: 'ok' }, body, request, response, record);
    case 'drop':
      record.answered = 'dropped';
      request.socket.destroy();
      return;
    case 'big':
      record.answered = 200;
      return answer(response, 200, 'x'.repeat(behaviour.bytes));
    default:
      record.answered = 500;
      return answer(response, 500, `unknown behaviour ${JSON.stringify(behaviour)}`);
  }
}

function challengeOf(body) {
  try {
    const parsed = JSON.parse(body);
    return parsed?.type === 'verification' && typeof parsed.challenge === 'string' ? parsed.challenge : undefined;
  } catch {
    return undefined;
  }
}

function answer(response, status, body) {
  response.writeHead(status, body === undefined ? {} : { 'content-type': 'application/json' });
  response.end(body);
}
