// The MCP clients people build agents with, and MCP Inspector's CLI, against the demo a user runs
// with `npm run dev` (wrangler.toml), each as its own documentation shows it used: list the tools,
// call `countdown`. The AI SDK's, OpenAI Agents' and Mastra's clients speak 2026-07-28 by default
// (no session: they see the two tools every request's server has); LangChain's adapters, mcp-use
// and the Inspector open a 2025 session (they also see `tally` and `note`, which need one;
// LangChain's calls `tally` twice in its session: 1, then 2). Each check throws on anything else.
// Run by scripts/conformance.mjs after the client matrix; alone, against a server already running:
//   node scripts/agent-clients/clients.mjs [url]   (default http://localhost:8787/mcp)
// Either way the clients' own dependencies (this folder's lockfile) are installed first if needed,
// before any server is asked anything: the install blocks this process for half a minute, long
// enough for a server to close the connections its pool keeps, which a client's next POST would
// then find closed ("other side closed").
// Nothing here talks to anything but `url`: the frameworks' telemetry and tracing exports are
// turned off before any of them is loaded (mcp-use's and Mastra's are on by default, the OpenAI
// Agents SDK's tracing too; LangChain's is off unless its environment turns it on), and their
// install scripts are not run (package.json `allowScripts`; one of them reports the install).
// mcp-use is 1.34.6, the last with a client: from 2.x its client is a package the registry does
// not serve.
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureDeps } from '../ensure-deps.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));

/** Installs the clients' dependencies if they are missing (this folder's lockfile). */
export function installAgentClients() {
  ensureDeps(HERE, 'agent clients');
}

/** The frameworks, loaded with their telemetry and tracing off (mcp-use's, Mastra's and OpenAI Agents' are on by default). */
async function load() {
  process.env.MASTRA_TELEMETRY_DISABLED = '1';
  process.env.LANGSMITH_TRACING = 'false';
  process.env.LANGCHAIN_TRACING_V2 = 'false';
  process.env.OPENAI_AGENTS_DISABLE_TRACING = '1';
  process.env.MCP_USE_ANONYMIZED_TELEMETRY = 'false';
  const [aiSdk, langChain, mastra, openAi, mcpUse] = await Promise.all([
    import('@ai-sdk/mcp'),
    import('@langchain/mcp-adapters'),
    import('@mastra/mcp'),
    import('@openai/agents'),
    import('mcp-use'),
  ]);
  openAi.setTracingDisabled(true);
  return {
    createMCPClient: aiSdk.createMCPClient,
    MultiServerMCPClient: langChain.MultiServerMCPClient,
    MastraClient: mastra.MCPClient,
    MCPServerStreamableHttp: openAi.MCPServerStreamableHttp,
    McpUseClient: mcpUse.MCPClient,
  };
}

const INSPECTOR = join(HERE, 'node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js');
const COUNTDOWN = { from: 3, interval_ms: 50 };
const LIFTOFF = 'liftoff after 3';
const MODERN_TOOLS = ['confirm', 'countdown'];
const SESSION_TOOLS = ['confirm', 'countdown', 'note', 'tally'];

const sorted = (names) => [...names].sort();
const textOf = (content) => content?.find?.((part) => part.type === 'text')?.text;

function expect(label, what, actual, expected) {
  if (JSON.stringify(actual) !== JSON.stringify(expected)) {
    throw new Error(`${label}: ${what} ${JSON.stringify(actual)?.slice(0, 300)}, expected ${JSON.stringify(expected)}`);
  }
}

async function aiSdk(url, { createMCPClient }) {
  const client = await createMCPClient({ transport: { type: 'http', url } });
  try {
    const tools = await client.tools();
    expect('@ai-sdk/mcp', 'tools', sorted(Object.keys(tools)), MODERN_TOOLS);
    const result = await tools.countdown.execute(COUNTDOWN, { toolCallId: 'countdown-1', messages: [] });
    expect('@ai-sdk/mcp', 'countdown', textOf(result.content), LIFTOFF);
    return `2026-07-28 (tools ${MODERN_TOOLS.join(', ')}): countdown → ${JSON.stringify(LIFTOFF)}`;
  } finally {
    await client.close();
  }
}

async function openAiAgents(url, { MCPServerStreamableHttp }) {
  const server = new MCPServerStreamableHttp({ url, name: 'demo' });
  await server.connect();
  try {
    expect('@openai/agents', 'tools', sorted((await server.listTools()).map((tool) => tool.name)), MODERN_TOOLS);
    expect('@openai/agents', 'countdown', textOf(await server.callTool('countdown', COUNTDOWN)), LIFTOFF);
    return `2026-07-28 (tools ${MODERN_TOOLS.join(', ')}): countdown → ${JSON.stringify(LIFTOFF)}`;
  } finally {
    await server.close();
  }
}

async function mastra(url, { MastraClient }) {
  const client = new MastraClient({ servers: { demo: { url: new URL(url), enableProgressTracking: true } } });
  try {
    const progress = [];
    await client.progress.onUpdate('demo', ({ progress: step }) => progress.push(step));
    const tools = await client.listTools();
    expect(
      '@mastra/mcp',
      'tools',
      sorted(Object.keys(tools)),
      MODERN_TOOLS.map((name) => `demo_${name}`),
    );
    expect('@mastra/mcp', 'countdown', textOf((await tools.demo_countdown.execute(COUNTDOWN, {})).content), LIFTOFF);
    expect('@mastra/mcp', 'countdown progress', progress, [1, 2, 3]);
    return `2026-07-28 (tools ${MODERN_TOOLS.join(', ')}): countdown progress [1,2,3] → ${JSON.stringify(LIFTOFF)}`;
  } finally {
    await client.disconnect();
  }
}

async function langChain(url, { MultiServerMCPClient }) {
  const progress = [];
  const client = new MultiServerMCPClient({
    mcpServers: { demo: { url, transport: 'http' } },
    onProgress: ({ progress: step }) => progress.push(step),
  });
  try {
    const tools = await client.getTools();
    const tool = (name) => tools.find((candidate) => candidate.name === name || candidate.name.endsWith(`__${name}`));
    expect('@langchain/mcp-adapters', 'tools', sorted(tools.map((candidate) => candidate.name.replace(/^.*__/, ''))), SESSION_TOOLS);
    expect('@langchain/mcp-adapters', 'countdown', await tool('countdown').invoke(COUNTDOWN), LIFTOFF);
    expect('@langchain/mcp-adapters', 'countdown progress', progress, [1, 2, 3]);
    const key = `agent-clients-${crypto.randomUUID()}`;
    const tallies = [await tool('tally').invoke({ key }), await tool('tally').invoke({ key })];
    expect('@langchain/mcp-adapters', 'tally twice in its session', tallies, ['1', '2']);
    return `a session (tools ${SESSION_TOOLS.join(', ')}): countdown progress [1,2,3] → ${JSON.stringify(LIFTOFF)}; tally 1, 2`;
  } finally {
    await client.close();
  }
}

async function mcpUse(url, { McpUseClient }) {
  const client = McpUseClient.fromDict({ mcpServers: { demo: { url } } });
  try {
    const session = await client.createSession('demo');
    expect('mcp-use', 'tools', sorted(session.connector.tools.map((tool) => tool.name)), SESSION_TOOLS);
    const progress = [];
    const result = await session.connector.callTool('countdown', COUNTDOWN, { onprogress: ({ progress: step }) => progress.push(step) });
    expect('mcp-use', 'countdown', textOf(result.content), LIFTOFF);
    expect('mcp-use', 'countdown progress', progress, [1, 2, 3]);
    return `a session (tools ${SESSION_TOOLS.join(', ')}): countdown progress [1,2,3] → ${JSON.stringify(LIFTOFF)}`;
  } finally {
    await client.closeAllSessions();
  }
}

function inspectorCli(url) {
  const run = (...args) => {
    const result = spawnSync(process.execPath, [INSPECTOR, '--cli', url, ...args], { encoding: 'utf8', timeout: 60_000 });
    if (result.status !== 0)
      throw new Error(`MCP Inspector CLI ${args.join(' ')}: exit ${result.status}: ${result.stderr || result.stdout}`);
    return JSON.parse(result.stdout);
  };
  const listed = sorted(run('--method', 'tools/list').tools.map((tool) => tool.name));
  expect('MCP Inspector CLI', 'tools', listed, SESSION_TOOLS);
  const called = run('--method', 'tools/call', '--tool-name', 'countdown', '--tool-arg', 'from=3', '--tool-arg', 'interval_ms=50');
  expect('MCP Inspector CLI', 'countdown', textOf(called.content), LIFTOFF);
  return `a session (tools ${SESSION_TOOLS.join(', ')}): countdown → ${JSON.stringify(LIFTOFF)}`;
}

const CLIENTS = [
  ['@ai-sdk/mcp 2.0.99', aiSdk],
  ['@openai/agents 0.20.0', openAiAgents],
  ['@mastra/mcp 2.0.0', mastra],
  ['@langchain/mcp-adapters 1.1.4', langChain],
  ['mcp-use 1.34.6', mcpUse],
  ['MCP Inspector CLI 2.12.0', inspectorCli],
];

/** Every client in turn (installed first: `installAgentClients`); throws with the first that fails. */
export async function agentClients(url) {
  const frameworks = await load();
  for (const [label, check] of CLIENTS) console.log(`${label.padEnd(30)} ${await check(url, frameworks)}`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  installAgentClients();
  await agentClients(process.argv[2] ?? 'http://localhost:8787/mcp');
}
