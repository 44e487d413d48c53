// The MCP clients people build agents with, and MCP Inspector's CLI, against the demo a user runs
// with `npm run dev` (wrangler.toml), each as its own documentation shows it used: list the tools,
// call `countdown`. Each client is checked in every era it can be made to speak through an option
// of its own (nothing patched): a 2025 session sees the four tools (`tally` and `note` need a
// session), 2026-07-28 the two every request's server has. Each check throws on anything else.
//   - the AI SDK's: 2026-07-28 by default (a `server/discover` probe); a session with its
//     `protocolVersionDiscovery: false` (then it sends `initialize` with 2025-11-25).
//   - Mastra's: 2026-07-28 by default (the SDK v2 client in `auto`); a session with the server
//     entry's `protocolVersion: 'legacy'`. Progress in both.
//   - MCP Inspector's CLI: a session by default (`legacy`); 2026-07-28 with `--protocol-era modern`,
//     where it lists the tools but refuses the task `countdown` becomes (see `inspectorCli`).
//   - OpenAI Agents' (`MCPServerStreamableHttp`): 2026-07-28 only here. It builds the SDK v2
//     client with `versionNegotiation: { mode: 'auto' }` and no option to change it: it falls
//     back to a session only against a server that does not offer 2026-07-28, which this one does.
//   - LangChain's adapters and mcp-use: a session only. Both drive the SDK v1 client
//     (@modelcontextprotocol/sdk 1.32.2 and 1.26.0), which sends `initialize` with 2025-11-25 and
//     knows no `server/discover`. LangChain's calls `tally` twice in its session: 1, then 2.
// Run by scripts/ci/conformance.mjs after the client matrix; alone, against a server already running:
//   node scripts/ci/agent-clients/clients.mjs [url]   (default http://localhost:8787/mcp)
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
import { ensureDeps } from '../../support/ensure-deps.mjs';

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
const MODERN_TOOLS = ['confirm', 'countdown', 'post_note'];
const SESSION_TOOLS = ['confirm', 'countdown', 'note', 'post_note', 'tally'];

/** What each era's server lists, and how a line names the era. */
const ERAS = {
  modern: { tools: MODERN_TOOLS, name: '2026-07-28' },
  session: { tools: SESSION_TOOLS, name: 'a session' },
};

const sorted = (names) => [...names].sort();
const textOf = (content) => content?.find?.((part) => part.type === 'text')?.text;

function expect(label, what, actual, expected) {
  if (JSON.stringify(actual) !== JSON.stringify(expected)) {
    throw new Error(`${label}: ${what} ${JSON.stringify(actual)?.slice(0, 300)}, expected ${JSON.stringify(expected)}`);
  }
}

/** `protocolVersionDiscovery: false` skips its `server/discover` probe: `initialize`, a session. */
async function aiSdk(url, { createMCPClient }, era) {
  const client = await createMCPClient({
    transport: { type: 'http', url },
    ...(era === ERAS.session ? { protocolVersionDiscovery: false } : {}),
  });
  try {
    const tools = await client.tools();
    expect('@ai-sdk/mcp', 'tools', sorted(Object.keys(tools)), era.tools);
    const result = await tools.countdown.execute(COUNTDOWN, { toolCallId: 'countdown-1', messages: [] });
    expect('@ai-sdk/mcp', 'countdown', textOf(result.content), LIFTOFF);
    return `${era.name} (tools ${era.tools.join(', ')}): countdown → ${JSON.stringify(LIFTOFF)}`;
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

/** The server entry's `protocolVersion: 'legacy'` makes its SDK v2 client `initialize` (a session). */
async function mastra(url, { MastraClient }, era) {
  const demo = { url: new URL(url), enableProgressTracking: true, ...(era === ERAS.session ? { protocolVersion: 'legacy' } : {}) };
  const client = new MastraClient({ servers: { demo } });
  try {
    const progress = [];
    await client.progress.onUpdate('demo', ({ progress: step }) => progress.push(step));
    const tools = await client.listTools();
    expect(
      '@mastra/mcp',
      'tools',
      sorted(Object.keys(tools)),
      era.tools.map((name) => `demo_${name}`),
    );
    expect('@mastra/mcp', 'countdown', textOf((await tools.demo_countdown.execute(COUNTDOWN, {})).content), LIFTOFF);
    expect('@mastra/mcp', 'countdown progress', progress, [1, 2, 3]);
    return `${era.name} (tools ${era.tools.join(', ')}): countdown progress [1,2,3] → ${JSON.stringify(LIFTOFF)}`;
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

/** What the Inspector's one-shot `tools/call` says to a task, which it does not follow. */
const INSPECTOR_TASK_REFUSAL = { error: { code: 'error', message: "Unsupported result type 'task' for tools/call" } };

/**
 * Legacy (a session) unless `--protocol-era modern`, which pins 2026-07-28. There the CLI declares
 * the Tasks extension (on by default, no flag turns it off; mcp.json's `advertisedExtensions` is
 * not passed to the CLI's client), so the demo answers `countdown` with a task (docs/tasks.md), and
 * its one-shot `tools/call` follows a task only for a tool whose `execution.taskSupport` is
 * `required`: the SDK client under it throws. Checked as it is: the list, and that refusal.
 */
function inspectorCli(url, _frameworks, era) {
  const eraArgs = era === ERAS.modern ? ['--protocol-era', 'modern'] : [];
  const run = (...args) => {
    const result = spawnSync(process.execPath, [INSPECTOR, '--cli', url, ...eraArgs, ...args], { encoding: 'utf8', timeout: 60_000 });
    const what = `MCP Inspector CLI ${[...eraArgs, ...args].join(' ')}`;
    if (result.status === 0) return JSON.parse(result.stdout);
    // It writes a failure as JSON on stderr.
    if (result.status === 1 && era === ERAS.modern && result.stderr.trim() === JSON.stringify(INSPECTOR_TASK_REFUSAL)) {
      return INSPECTOR_TASK_REFUSAL;
    }
    throw new Error(`${what}: exit ${result.status}: ${result.stderr || result.stdout}`);
  };
  const listed = sorted(run('--method', 'tools/list').tools.map((tool) => tool.name));
  expect('MCP Inspector CLI', 'tools', listed, era.tools);
  const called = run('--method', 'tools/call', '--tool-name', 'countdown', '--tool-arg', 'from=3', '--tool-arg', 'interval_ms=50');
  if (era === ERAS.modern) {
    expect('MCP Inspector CLI', 'countdown (a task it does not follow)', called, INSPECTOR_TASK_REFUSAL);
    return `${era.name} (tools ${era.tools.join(', ')}): countdown answered with a task, which its tools/call refuses: ${JSON.stringify(called.error.message)}`;
  }
  expect('MCP Inspector CLI', 'countdown', textOf(called.content), LIFTOFF);
  return `${era.name} (tools ${era.tools.join(', ')}): countdown → ${JSON.stringify(LIFTOFF)}`;
}

/**
 * Each client in each era it can be made to speak (the header says why three have one), and the
 * option of its own that selects the era where it is not the client's default.
 */
const CLIENTS = [
  ['@ai-sdk/mcp 2.0.99', aiSdk, ERAS.modern],
  ['@ai-sdk/mcp 2.0.99', aiSdk, ERAS.session, 'protocolVersionDiscovery: false'],
  ['@openai/agents 0.20.0', openAiAgents, ERAS.modern],
  ['@mastra/mcp 2.0.0', mastra, ERAS.modern],
  ['@mastra/mcp 2.0.0', mastra, ERAS.session, "protocolVersion: 'legacy'"],
  ['@langchain/mcp-adapters 1.1.4', langChain, ERAS.session],
  ['mcp-use 1.34.6', mcpUse, ERAS.session],
  ['MCP Inspector CLI 2.12.0', inspectorCli, ERAS.session],
  ['MCP Inspector CLI 2.12.0', inspectorCli, ERAS.modern, '--protocol-era modern'],
];

/** Every client in turn (installed first: `installAgentClients`); throws with the first that fails. */
export async function agentClients(url) {
  const frameworks = await load();
  for (const [label, check, era, option] of CLIENTS) {
    console.log(`${label.padEnd(30)} ${await check(url, frameworks, era)}${option ? ` [${option}]` : ''}`);
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  installAgentClients();
  await agentClients(process.argv[2] ?? 'http://localhost:8787/mcp');
}
