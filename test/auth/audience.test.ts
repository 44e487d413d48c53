/**
 * The audience a token must carry (AUTH=jwt). Without MCP_RESOURCE or AUTH_AUDIENCE it is the
 * endpoint's URL as each request names it — its Host, allowlisted before authentication — so
 * each allowed host accepts exactly its own tokens, whichever host an isolate was asked first.
 * Each row runs on a Worker of its own (a fresh isolate's state), in the order given.
 */
import { createExecutionContext } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { createMcpWorker } from '../../src/lib.ts';
import { initializeRequest } from '../support/mcp-http.ts';
import { bearer } from '../support/tokens.ts';

/** Both in the test Worker's ALLOWED_HOSTS (test/fixture-server/wrangler.toml), any port. */
const A = 'localhost';
const B = '127.0.0.1';
const CONFIGURED = 'https://mcp.example.com/mcp';

/** A request at `host`, with a token for `audience` (none when null), and the status it got. */
type Step = readonly [host: string, audience: string | null, status: number];
const at = (host: string) => `http://${host}/mcp`;

function freshWorker(vars: Record<string, string> = {}) {
  const worker = createMcpWorker<Env>({ sessions: (e) => e.MCP_SESSION });
  const environment = { ...env, ...vars };
  return async ([host, audience]: Step): Promise<number> => {
    const token = audience === null ? {} : await bearer('alice', { audience });
    const response = await worker.fetch(
      new Request(at(host), {
        method: 'POST',
        headers: { Host: host, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...token },
        body: JSON.stringify(initializeRequest()),
      }),
      environment,
      createExecutionContext(),
    );
    await response.body?.cancel();
    return response.status;
  };
}

async function run(steps: readonly Step[], vars?: Record<string, string>) {
  const send = freshWorker(vars);
  const seen: Step[] = [];
  for (const step of steps) seen.push([step[0], step[1], await send(step)]);
  expect(seen).toEqual(steps);
}

describe('without MCP_RESOURCE or AUTH_AUDIENCE, each allowed host', () => {
  const rows: [string, Step[]][] = [
    [
      'is not pinned by a request without a token at another host (the attack order)',
      [
        [A, null, 401],
        [B, at(B), 200],
        [B, at(A), 401],
        [A, at(A), 200],
      ],
    ],
    [
      'accepts its own tokens and refuses the other host’s, asked first',
      [
        [A, at(A), 200],
        [B, at(A), 401],
        [B, at(B), 200],
        [A, at(B), 401],
      ],
    ],
    [
      'accepts its own tokens and refuses the other host’s, asked second',
      [
        [B, at(B), 200],
        [A, at(B), 401],
        [A, at(A), 200],
        [B, at(A), 401],
      ],
    ],
    [
      'is not pinned by a refused token for the other host',
      [
        [B, at(A), 401],
        [A, at(A), 200],
        [B, at(B), 200],
      ],
    ],
    [
      'is another audience on another port',
      [
        [`${A}:8787`, at(A), 401],
        [`${A}:8787`, at(`${A}:8787`), 200],
        [A, at(`${A}:8787`), 401],
        [A, at(A), 200],
      ],
    ],
  ];
  it.each(rows)('%s', async (_name, steps) => run(steps));
});

describe('a configured audience', () => {
  it.each([
    ['AUTH_AUDIENCE', { AUTH_AUDIENCE: CONFIGURED }],
    ['MCP_RESOURCE', { MCP_RESOURCE: CONFIGURED }],
  ])('%s is the one audience of every host', async (_name, vars) =>
    run(
      [
        [A, at(A), 401],
        [B, CONFIGURED, 200],
        [A, CONFIGURED, 200],
        [B, at(B), 401],
      ],
      vars,
    ),
  );
});

/**
 * Issue 42: an entry without a port admits the default ports only, so a Host on another port
 * names no resource of this server — a token the same issuer minted for that port's resource
 * (`http://127.0.0.1:9999/mcp`) is refused with the Host (403), before any audience is derived.
 * `name:*` says that every port of the name is this server, and accepts each port's own tokens.
 */
describe('the port of an allowed host', () => {
  it.each([
    [
      'a bare name is its default ports: a token for another port, at that port, is refused',
      { ALLOWED_HOSTS: 'mcp.example.com' },
      [
        ['mcp.example.com:9999', at('mcp.example.com:9999'), 403],
        ['mcp.example.com', at('mcp.example.com'), 200],
        ['mcp.example.com:443', at('mcp.example.com:9999'), 401],
      ],
    ],
    [
      'a bare loopback address is its default ports too',
      { ALLOWED_HOSTS: '127.0.0.1' },
      [
        ['127.0.0.1:9999', at('127.0.0.1:9999'), 403],
        ['127.0.0.1', at('127.0.0.1'), 200],
      ],
    ],
    [
      'a listed port is that port alone',
      { ALLOWED_HOSTS: '127.0.0.1:8787' },
      [
        ['127.0.0.1:9999', at('127.0.0.1:9999'), 403],
        ['127.0.0.1:8787', at('127.0.0.1:9999'), 401],
        ['127.0.0.1:8787', at('127.0.0.1:8787'), 200],
      ],
    ],
    [
      'name:* is every port, each its own audience',
      { ALLOWED_HOSTS: '127.0.0.1:*' },
      [
        ['127.0.0.1:9999', at('127.0.0.1:8787'), 401],
        ['127.0.0.1:9999', at('127.0.0.1:9999'), 200],
        ['127.0.0.1:8787', at('127.0.0.1:8787'), 200],
      ],
    ],
  ] as [string, Record<string, string>, Step[]][])('%s', async (_name, vars, steps) => run(steps, vars));
});
