// What a cold isolate costs (C1, workloads/c-cold-start.mjs): the Workers measured, how each
// is bundled, and how a fresh process's first answers are timed.
// The workload decides what runs when and what is reported; this file measures one Worker at a time.
//
// The Workers. Ours in each configuration a user has: what `init` writes (src/init/, run here
// from its TypeScript by Node's type stripping) for AUTH none, jwt and oauth, each with tasks and
// the bus (init's default) and without them (`--no-tasks`, and the `bus` option and binding
// removed as the generated wrangler.toml says to), with the benchmark's `echo` beside init's
// `countdown`, and the repository's demo (every feature:
// events, webhooks, tasks, the bus, the registry). Each is written under
// .cache/bench-state/c1/projects/ with `mcp-edge-sessions` aliased to a checkout's src/lib.ts,
// as the `ours` peer builds it. Beside them, any Worker peer's own configuration, and the SDK's
// `createMcpHandler` alone in a Worker (bench/peers/startup-floor).
//
// Bundled as `wrangler deploy --dry-run --outfile` bundles: the upload wrangler would send, whose
// size is what wrangler prints as "Total Upload" (every module but source maps, raw and gzipped
// with zlib's default level, as wrangler counts them), and whose modules are also written out as
// files for workerd-host.mjs.
//
// How startup is measured (the profile, thread CPU, what a bundle leaves unevaluated) is
// startup-cpu.mjs's.
//
// A fresh process (`firstAnswer`): workerd-host.mjs serving the prebuilt bundle
// (BENCH_PEER_BUNDLE), timed from its spawn to its "ready" line, then one request, sent once:
// `initialize` (2025-11-25) or a 2026-07-28 `tools/call` of `echo`.
import { execFile, spawn } from 'node:child_process';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import { modernRequest, now, PROTOCOL_VERSION, readSse, responseTo } from './client.mjs';
import { freePort } from './ports.mjs';

const run = promisify(execFile);
export const REPO = resolve(import.meta.dirname, '../..');
const WRANGLER = join(REPO, 'node_modules/wrangler/bin/wrangler.js');
const STATE = join(REPO, '.cache/bench-state/c1');
/** The SDK's `createMcpHandler` alone in a Worker: the floor of a cold start. */
export const HANDLER_CONFIG = join(REPO, 'bench/peers/startup-floor/wrangler.toml');
export const QUIET = {
  WRANGLER_SEND_METRICS: 'false',
  CLOUDFLARE_CF_FETCH_ENABLED: 'false',
  WRANGLER_HIDE_BANNER: 'true',
  XDG_CONFIG_HOME: join(REPO, '.cache/xdg'),
};
const READY_TIMEOUT_MS = 90_000;
const REQUEST_TIMEOUT_MS = 30_000;

/** Ours's configurations: init's options, and whether the bus is kept (init always writes it); `demo`, the repository's Worker. */
export const CONFIGURATIONS = Object.freeze([
  { name: 'none', auth: 'none', tasks: true, bus: true, label: 'AUTH=none (init: tasks, bus)' },
  { name: 'none_bare', auth: 'none', tasks: false, bus: false, label: 'AUTH=none, no tasks, no bus' },
  { name: 'jwt', auth: 'jwt', tasks: true, bus: true, label: 'AUTH=jwt (init: tasks, bus)' },
  { name: 'jwt_bare', auth: 'jwt', tasks: false, bus: false, label: 'AUTH=jwt, no tasks, no bus' },
  { name: 'oauth', auth: 'oauth', tasks: true, bus: true, label: 'AUTH=oauth (init: tasks, bus)' },
  { name: 'oauth_bare', auth: 'oauth', tasks: false, bus: false, label: 'AUTH=oauth, no tasks, no bus' },
  { name: 'demo', label: 'the demo (events, webhooks, AUTH=none)' },
]);

/** One exact edit of generated text, or an error naming what init no longer writes. */
function cut(text, what, replacement = '') {
  if (!text.includes(what)) throw new Error(`C1: init no longer writes ${JSON.stringify(what)}; update bench/harness/cold-start.mjs`);
  return text.replace(what, replacement);
}

/** The project init writes for `configuration` (from `source`'s src/init/), without the bus where it asks. */
async function initProject({ name, auth, tasks, bus }, source) {
  const { projectFiles } = await import(join(source, 'src/init/project-files.ts'));
  const manifest = JSON.parse(await readFile(join(source, 'package.json'), 'utf8'));
  const options = {
    dir: name,
    name: `c1-${name.replaceAll('_', '-')}`,
    auth,
    idp: auth === 'oauth' ? 'demo' : undefined,
    tasks,
    packageSpec: undefined,
  };
  const files = Object.fromEntries(projectFiles(options, manifest).map((file) => [file.path, file.text]));
  if (!bus) {
    // As the generated wrangler.toml says: "remove the `bus` line in src/index.ts too".
    files['src/index.ts'] = cut(files['src/index.ts'], '  bus: (env) => env.MCP_BUS,\n');
    const alone = "export { McpEventBus } from 'mcp-edge-sessions';\n";
    files['src/index.ts'] = cut(files['src/index.ts'], files['src/index.ts'].includes(alone) ? alone : 'McpEventBus, ');
    files['wrangler.toml'] = cut(files['wrangler.toml'], '[[durable_objects.bindings]]\nname = "MCP_BUS"\nclass_name = "McpEventBus"\n');
    files['wrangler.toml'] = cut(files['wrangler.toml'], 'McpEventBus = { type = "durable-object", storage = "sqlite" }\n');
  }
  // The benchmark's `echo` beside init's `countdown`, so that a fresh process's first 2026-07-28 call is the same call on every Worker.
  const registerTools = 'export function registerTools(server: McpServer): void {\n';
  files['src/tools.ts'] = cut(
    files['src/tools.ts'],
    registerTools,
    `${registerTools}  server.registerTool('echo', { description: 'Returns its text.', inputSchema: z.object({ text: z.string() }) }, async ({ text }) => ({\n    content: [{ type: 'text', text }],\n  }));\n`,
  );
  return { 'src/index.ts': files['src/index.ts'], 'src/tools.ts': files['src/tools.ts'], 'wrangler.toml': files['wrangler.toml'] };
}

/** The repository's demo Worker (`source`'s root wrangler.toml), without its build step: it reads src/ through the alias. */
async function demoProject(dir, source) {
  let toml = await readFile(join(source, 'wrangler.toml'), 'utf8');
  toml = cut(toml, '[build]\ncommand = "npm run build --silent"\nwatch_dir = "src"\n');
  return {
    'wrangler.toml': cut(
      toml,
      'main = "examples/demo/src/index.ts"',
      `main = ${JSON.stringify(relative(dir, join(source, 'examples/demo/src/index.ts')))}`,
    ),
  };
}

/**
 * Writes ours's configuration under .cache/bench-state/c1/projects/<label>/ and returns its
 * wrangler.toml. `mcp-edge-sessions` resolves to `source`'s src/lib.ts — this checkout's, or
 * another's under .cache (a peer `ours@<dir>`) — and the SDK, zod, hono, … to the root's node_modules.
 */
export async function writeConfiguration(configuration, { source = REPO, label = configuration.name } = {}) {
  const dir = join(STATE, 'projects', label);
  await rm(dir, { recursive: true, force: true });
  const files = configuration.name === 'demo' ? await demoProject(dir, source) : await initProject(configuration, source);
  files['wrangler.toml'] += `\n[alias]\n"mcp-edge-sessions" = ${JSON.stringify(relative(dir, join(source, 'src/lib.ts')))}\n`;
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), text);
  }
  return join(dir, 'wrangler.toml');
}

/**
 * Bundles `config` as `wrangler deploy --dry-run` does, into .cache/bench-state/c1/bundles/<name>/:
 * `upload` (the multipart body wrangler would send, which `check startup --worker` takes) and
 * `dir` (its modules as files). Resolves with { name, config, upload, dir, main, compatibility,
 * rawBytes, gzipBytes } (sizes as wrangler counts them).
 */
export async function bundle(name, config) {
  const root = join(STATE, 'bundles', name);
  await rm(root, { recursive: true, force: true });
  const dir = join(root, 'modules');
  await mkdir(dir, { recursive: true });
  const upload = join(root, 'worker.bundle');
  await run(process.execPath, [WRANGLER, 'deploy', '--dry-run', `--outfile=${upload}`, '-c', config], {
    cwd: REPO,
    env: { ...process.env, ...QUIET },
  });
  const form = await uploadForm(upload);
  const metadata = JSON.parse(form.get('metadata'));
  const modules = [];
  for (const [field, entry] of form.entries()) {
    if (typeof entry === 'string') continue;
    const bytes = Buffer.from(await entry.arrayBuffer());
    await mkdir(dirname(join(dir, field)), { recursive: true });
    await writeFile(join(dir, field), bytes);
    if (entry.type !== 'application/source-map') modules.push(bytes);
  }
  const raw = Buffer.concat(modules);
  return {
    name,
    config,
    upload,
    dir,
    main: metadata.main_module,
    compatibility: { date: metadata.compatibility_date, flags: metadata.compatibility_flags ?? [] },
    rawBytes: raw.byteLength,
    gzipBytes: gzipSync(raw).byteLength,
  };
}

/** The upload's parts (wrangler's multipart body, as `check startup` reads it). */
async function uploadForm(upload) {
  const body = await readFile(upload);
  const boundary = body.subarray(2, body.indexOf(10)).toString().trim();
  return new Response(body, { headers: { 'Content-Type': `multipart/form-data; boundary=${boundary}` } }).formData();
}

/**
 * A fresh process serving `built` (workerd-host.mjs, the prebuilt bundle), its first request
 * `ask(url)`: { readyMs (spawn → "ready"), firstMs (that request sent → answered) }. The
 * process group is stopped before this resolves.
 */
export async function firstAnswer(built, ask) {
  const port = await freePort();
  const stateDir = join(STATE, 'fresh', built.name);
  await rm(stateDir, { recursive: true, force: true });
  await mkdir(stateDir, { recursive: true });
  const started = now();
  const child = spawn(process.execPath, [join(REPO, 'bench/peers/workerd-host.mjs'), built.config, String(port), stateDir], {
    cwd: REPO,
    env: { ...process.env, ...QUIET, BENCH_PEER_BUNDLE: built.dir },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  try {
    const url = await new Promise((resolveReady, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`C1: ${built.name} not ready within ${READY_TIMEOUT_MS} ms: ${output}`)),
        READY_TIMEOUT_MS,
      );
      child.stdout.setEncoding('utf8').on('data', (chunk) => {
        output += chunk;
        const ready = /^ready (\S+)$/m.exec(output);
        if (ready === null) return;
        clearTimeout(timer);
        resolveReady(new URL('mcp', ready[1]).href);
      });
      child.stderr.setEncoding('utf8').on('data', (chunk) => (output += chunk));
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`C1: ${built.name} exited (${code}) before it was ready: ${output.slice(-500)}`));
      });
    });
    const readyMs = now() - started;
    const sent = now();
    await ask(url);
    return { readyMs, firstMs: now() - sent };
  } finally {
    await stopGroup(child);
  }
}

async function stopGroup(child) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  const signal = (name) => {
    try {
      process.kill(-child.pid, name);
    } catch {
      // the group is gone
    }
  };
  signal('SIGTERM');
  const timer = setTimeout(() => signal('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

/** The first requests C1 times: a session's `initialize` (its answer, not `notifications/initialized`), a 2026-07-28 `tools/call` of `echo`. */
export const FIRST = {
  async initialize(url) {
    const request = {
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'mcp-bench', version: '1.0.0' } },
    };
    const response = await fetch(url, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        'MCP-Protocol-Version': PROTOCOL_VERSION,
      },
      body: JSON.stringify(request),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    let answer;
    if ((response.headers.get('content-type') ?? '').startsWith('text/event-stream'))
      await readSse(response, (event) => ((answer = responseTo(event.message, 0)) ? 'stop' : undefined));
    else answer = responseTo(await response.json().catch(() => undefined), 0);
    if (response.status !== 200 || !answer?.result)
      throw new Error(`initialize: HTTP ${response.status} ${JSON.stringify(answer?.error ?? null)}`);
  },
  async modernCall(url) {
    const { status, message } = await modernRequest(
      url,
      'tools/call',
      { name: 'echo', arguments: { text: 'hi' } },
      { timeoutMs: REQUEST_TIMEOUT_MS },
    );
    if (status !== 200 || message?.result?.content?.[0]?.text !== 'hi')
      throw new Error(`2026-07-28 echo: HTTP ${status} ${JSON.stringify(message?.error ?? null)}`);
  },
};
