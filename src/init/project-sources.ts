/**
 * The source files of a new project (`init`): its Worker, its tool, its test and its README,
 * as text of the options. project-files.ts puts them beside the configuration.
 */
import type { InitOptions } from './init-options.ts';
import { SIGN_IN_SOURCES } from './sign-in-sources.ts';

export function indexTs({ name, tasks, auth }: InitOptions): string {
  const imports = [
    'createMcpWorker',
    'McpSessionObject',
    ...(tasks ? ['McpTaskObject'] : []),
    'sessionServerOptions',
    'type ModernContext',
    'type SessionContext',
  ];
  return `/**
 * The Worker: 2025-era clients get a session, one Durable Object each (\`Sessions\`); each
 * 2026-07-28 request gets an McpServer of its own (\`modernServer\`)${tasks ? ', and a tool that calls\n * `runTask` becomes a task, one `Tasks` object each' : ''}. The same tools serve both (src/tools.ts).
 */
import { McpServer } from '@modelcontextprotocol/server';
import {
${imports.map((i) => `  ${i},`).join('\n')}
} from 'mcp-edge-sessions';
import { registerTools } from './tools.ts';

const info = { name: '${name}', version: '0.0.0' };

export class Sessions extends McpSessionObject<Env> {
  protected override createServer(_session: SessionContext): McpServer {
    const server = new McpServer(info, sessionServerOptions());
    registerTools(server);
    return server;
  }
}

function modernServer({ requestState }: ModernContext): McpServer {
  const server = new McpServer(info, { requestState: { verify: requestState.verify } });
  registerTools(server);
  return server;
}
${
  tasks
    ? `
export class Tasks extends McpTaskObject<Env> {
  protected override createServer(context: ModernContext): McpServer {
    return modernServer(context);
  }
}
`
    : ''
}
export { McpEventBus${auth === 'none' ? '' : ', McpPrincipalRegistry'} } from 'mcp-edge-sessions';

export default createMcpWorker<Env>({
  sessions: (env) => env.MCP_SESSION,
  modern: modernServer,
  bus: (env) => env.MCP_BUS,
${tasks ? '  tasks: (env) => env.MCP_TASKS,\n' : ''}  rateLimit: (env) => env.MCP_RATE_LIMIT,
${auth === 'none' ? '' : '  principals: (env) => env.MCP_PRINCIPALS,\n'}}) satisfies ExportedHandler<Env>;
`;
}

export function toolsTs({ tasks }: InitOptions): string {
  const body = `const progressToken = ctx.mcpReq._meta?.progressToken;
      for (let step = 1; step <= from; step++) {
        // Cancellable: the client's cancellation aborts the signal.
        await scheduler.wait(interval_ms, { signal: ctx.mcpReq.signal });
        if (progressToken !== undefined) {
          await ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken, progress: step, total: from } });
        }
      }
      return { content: [{ type: 'text', text: \`liftoff after \${from}\` }] };`;
  const handler = tasks
    ? `    // runTask: a task for 2026-07-28 clients that declare the Tasks extension (its progress
    // becomes the task's events); an ordinary call otherwise, its progress on the call's stream.
    async ({ from, interval_ms }, ctx) =>
      runTask(async () => {
        ${body.replaceAll('\n', '\n  ')}
      }),`
    : `    async ({ from, interval_ms }, ctx) => {
      ${body}
    },`;
  return `/**
 * The tools, written once for both protocol eras: a 2025 session's McpServer and each
 * 2026-07-28 request's register the same ones (src/index.ts). Add yours here.
 */
import type { McpServer } from '@modelcontextprotocol/server';
${tasks ? "import { runTask } from 'mcp-edge-sessions';\n" : ''}import * as z from 'zod';

export function registerTools(server: McpServer): void {
  server.registerTool(
    'countdown',
    {
      description: 'Counts down from \`from\`, one progress notification a step, then reports liftoff.',
      inputSchema: z.object({ from: z.number().int().min(1).max(100), interval_ms: z.number().int().min(0).max(10_000).default(100) }),
    },
${handler}
  );
}
`;
}

export function serverTest({ auth, idp, tasks }: InitOptions): string {
  if (auth === 'oauth' && idp !== undefined && idp !== 'demo') return signedInServerTest(idp);
  const head = `/** The Worker as clients reach it, in workerd with its real bindings and storage. */
import { exports } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';

/** Where \`npm run dev\` serves it (with AUTH=oauth, MCP_RESOURCE's origin). */
const ORIGIN = 'http://localhost:8787';
const JSON_AND_SSE = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };

const post = (body: unknown, headers: Record<string, string> = {}) =>
  exports.default.fetch(new Request(\`\${ORIGIN}/mcp\`, { method: 'POST', headers: { ...JSON_AND_SSE, ...headers }, body: JSON.stringify(body) }));
`;
  if (auth !== 'none') {
    return `${head}
describe('the server (AUTH=${auth})', () => {
  it('asks for a token, and says where to get one', async () => {
    const response = await post({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    expect(response.status).toBe(401);
    expect(response.headers.get('WWW-Authenticate')).toContain('resource_metadata=');
    const metadata = await exports.default.fetch(new Request(\`\${ORIGIN}/.well-known/oauth-protected-resource/mcp\`));
    expect(metadata.status).toBe(200);
    expect(await metadata.json()).toMatchObject({ resource: expect.stringContaining('/mcp') });
  });
${
  auth === 'oauth'
    ? `
  it('answers at its demo sign-in page on loopback (elsewhere it refuses, 403, until oauth.authorize is yours)', async () => {
    // No client_id: the provider's own 400, which only a page that serves gives.
    const page = await exports.default.fetch(new Request(\`\${ORIGIN}/authorize\`, { headers: { Accept: 'text/html' } }));
    expect(page.status).toBe(400);
    expect(await page.json()).toMatchObject({ error: 'invalid_request' });
  });
`
    : ''
}});
`;
  }
  return `${head}
/** The JSON-RPC messages of a response: its SSE events' data, or its JSON body. */
async function messages(response: Response): Promise<any[]> {
  const text = await response.text();
  if (response.headers.get('Content-Type')?.startsWith('application/json')) return [JSON.parse(text)];
  return text.split('\\n').filter((line) => line.startsWith('data: {')).map((line) => JSON.parse(line.slice('data: '.length)));
}

/** A 2026-07-28 request: no session; the protocol version, capabilities and client in each request's _meta. */
function modern(id: number, method: string, params: Record<string, unknown>, extensions: Record<string, unknown> = {}) {
  const _meta = {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientCapabilities': { extensions },
    'io.modelcontextprotocol/clientInfo': { name: 'test', version: '0' },
  };
  const name = (params.name ?? params.taskId) as string | undefined;
  return post(
    { jsonrpc: '2.0', id, method, params: { ...params, _meta } },
    { 'MCP-Protocol-Version': '2026-07-28', 'Mcp-Method': method, ...(name !== undefined && { 'Mcp-Name': name }) },
  );
}

describe('the server', () => {
  it('serves a 2025 session: countdown streams its progress, then its result', async () => {
    const init = { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'test', version: '0' } };
    const opened = await post({ jsonrpc: '2.0', id: 0, method: 'initialize', params: init });
    const session = opened.headers.get('Mcp-Session-Id');
    expect(session).not.toBeNull();
    await opened.body?.cancel();
    const headers = { 'Mcp-Session-Id': session!, 'MCP-Protocol-Version': '2025-11-25' };
    expect((await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, headers)).status).toBe(202);
    const call = { name: 'countdown', arguments: { from: 3, interval_ms: 10 }, _meta: { progressToken: 'p1' } };
    const answer = await messages(await post({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: call }, headers));
    expect(answer.map((m) => m.params?.progress ?? m.result?.content[0].text)).toEqual([1, 2, 3, 'liftoff after 3']);
  });

  it('serves a 2026-07-28 call without a session', async () => {
    const answer = await messages(await modern(1, 'tools/call', { name: 'countdown', arguments: { from: 2, interval_ms: 0 } }));
    expect(answer.at(-1).result.content[0].text).toBe('liftoff after 2');
  });
${
  tasks
    ? `
  it('runs countdown as a task for a client that declares the Tasks extension', async () => {
    const tasks = { 'io.modelcontextprotocol/tasks': {} };
    const [created] = await messages(await modern(1, 'tools/call', { name: 'countdown', arguments: { from: 2, interval_ms: 10 } }, tasks));
    expect(created.result).toMatchObject({ resultType: 'task', status: 'working' });
    const { taskId } = created.result;
    // Polled as a client would, at most 5 s.
    for (let attempt = 0; attempt < 50; attempt++) {
      const [read] = await messages(await modern(2, 'tasks/get', { taskId }, tasks));
      if (read.result.status !== 'working') {
        expect(read.result).toMatchObject({ status: 'completed', result: { content: [{ type: 'text', text: 'liftoff after 2' }] } });
        return;
      }
      await scheduler.wait(100);
    }
    throw new Error('the task did not complete within 5 s');
  });
`
    : ''
}});
`;
}

/**
 * AUTH=oauth behind an identity provider: the test gives the Worker stand-in values for the
 * provider's variables, so that it passes before they are filled in and reaches no provider;
 * and shows that each one left empty is refused with a log line that names it.
 */
function signedInServerTest(idp: Exclude<InitOptions['idp'], 'demo' | undefined>): string {
  const { testValues, refusals } = SIGN_IN_SOURCES[idp];
  return `/** The Worker as clients reach it, in workerd with its real bindings and storage. */
import { createExecutionContext } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it, vi } from 'vitest';
import worker from '../src/index.ts';

/** Where \`npm run dev\` serves it (MCP_RESOURCE's origin). */
const ORIGIN = 'http://localhost:8787';

/**
 * Stand-ins for the sign-in's variables (SIGN_IN = "${idp}"), whatever wrangler.toml and
 * .dev.vars hold: the test needs no identity provider, and reaches none.
 */
const SIGN_IN_VARS: Record<string, string> = {
${Object.entries(testValues)
  .map(([name, value]) => `  ${name}: '${value}',`)
  .join('\n')}
};

/** The Worker with these variables over its own. */
const fetchWith = (request: Request, vars: Record<string, string> = SIGN_IN_VARS) =>
  worker.fetch(request, { ...env, ...vars } as Env, createExecutionContext());

describe('the server (AUTH=oauth, SIGN_IN=${idp})', () => {
  it('asks for a token, and says where to get one', async () => {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    const headers = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
    const response = await fetchWith(new Request(\`\${ORIGIN}/mcp\`, { method: 'POST', headers, body }));
    expect(response.status).toBe(401);
    expect(response.headers.get('WWW-Authenticate')).toContain('resource_metadata=');
    const metadata = await fetchWith(new Request(\`\${ORIGIN}/.well-known/oauth-protected-resource/mcp\`));
    expect(metadata.status).toBe(200);
    expect(await metadata.json()).toMatchObject({ resource: expect.stringContaining('/mcp') });
  });

  it('checks the client at /authorize before it sends anyone to the provider', async () => {
    // No client_id: the provider's own 400.
    const page = await fetchWith(new Request(\`\${ORIGIN}/authorize\`, { headers: { Accept: 'text/html' } }));
    expect(page.status).toBe(400);
    expect(await page.json()).toMatchObject({ error: 'invalid_request' });
  });

  it.each([
${refusals.map(([variable, named]) => `    ['${variable}', '${named}'],`).join('\n')}
  ])(
    'refuses to serve without %s: a 500 whose log says what to set',
    async (variable, named) => {
      const errors = vi.spyOn(console, 'error').mockImplementation(() => {});
      const response = await fetchWith(new Request(\`\${ORIGIN}/authorize\`), { ...SIGN_IN_VARS, [variable]: '' });
      const logged = errors.mock.calls.map(([line]) => String(line)).join('\\n');
      errors.mockRestore();
      expect(response.status).toBe(500);
      expect(logged).toContain(named);
    },
  );
});
`;
}

export function readme({ name, auth, idp, tasks }: InitOptions): string {
  const authLine = {
    none: "Anyone may call it (`AUTH` unset): fine for public tools and local work; see `AUTH` in the\nlibrary's docs/auth.md before exposing anything private.",
    jwt: 'It accepts JWT access tokens of your authorization server (`AUTH = "jwt"`): set `AUTH_ISSUER`,\n`AUTH_JWKS_URL` and `MCP_RESOURCE` in wrangler.toml to yours (the library\'s docs/auth.md).',
    oauth:
      'It embeds an OAuth authorization server (`AUTH = "oauth"`). **Its sign-in page is a demo that\nchecks no password: whoever reaches it can sign in as anyone.** It serves only on loopback\n(`npm run dev`: the request\'s host and `MCP_RESOURCE`\'s both localhost, 127.0.0.0/8 or [::1]) and\nrefuses elsewhere with a 403 saying why. Before deploying, sign users in otherwise:\n`SIGN_IN = "oidc"`, `"access"` or `"github"` (`npx mcp-edge-sessions init --auth oauth --idp …`\nwrites their variables and steps; the library\'s docs/auth.md), or your own page\n(`createMcpWorker({ oauth: { authorize } })`); create the KV namespace (`npx wrangler\nkv namespace create OAUTH_KV`, its id into wrangler.toml) and set `MCP_RESOURCE` (the library\'s\ndocs/auth.md). `DEMO_SIGN_IN = "anyone-is-anyone"` in `[vars]` serves the demo page anywhere:\nanyone is anyone there, so only for a server that holds nothing of anyone\'s.',
  }[auth];
  const source = auth === 'oauth' && idp !== undefined && idp !== 'demo' ? SIGN_IN_SOURCES[idp] : undefined;
  const oauthLine =
    source === undefined
      ? authLine
      : `It embeds an OAuth authorization server (\`AUTH = "oauth"\`) whose users sign in through
${source.title.replace(/ \(.*/, '')}: the steps are under *Sign-in* below. Before deploying, also create the KV
namespace (\`npx wrangler kv namespace create OAUTH_KV\`, its id into wrangler.toml) and set
\`MCP_RESOURCE\` to \`https://<your host>/mcp\` (the library's docs/auth.md).`;
  const signIn =
    source === undefined
      ? ''
      : `
## Sign-in: ${source.title}

${source.readme}
`;
  return `# ${name}

An MCP server on Cloudflare Workers, built with
[mcp-edge-sessions](https://www.npmjs.com/package/mcp-edge-sessions): every stream resumable
without loss or duplication, in both protocol eras (2025 sessions and 2026-07-28)${tasks ? ', with tasks' : ''}.

\`\`\`sh
npm install
npm run dev      # serves http://localhost:8787/mcp
npm test         # the server in workerd, with its real storage
npm run deploy   # wrangler deploy, with your own \`wrangler login\`
\`\`\`

Try it: \`npx @modelcontextprotocol/inspector --cli http://localhost:8787/mcp --transport http --method tools/list\`.

- **Tools** are in \`src/tools.ts\`, written once for both eras with the MCP SDK's \`McpServer\`.
- **wrangler.toml** has the bindings; the comments say which are optional. Add your deployed
  hostname to \`ALLOWED_HOSTS\` before deploying (other hosts are refused with 403; an entry
  without a port is its default ports only, \`name:*\` any port).
- ${oauthLine.replaceAll('\n', '\n  ')}
${signIn}`;
}
