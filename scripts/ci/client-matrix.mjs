// The official TypeScript client (@modelcontextprotocol/client v2) against a running server, in
// each of its era modes: `legacy` (initialize, a session), `auto` (probes server/discover, then
// serves modern if it can) and pinned modern (`{ pin: '2026-07-28' }`). In each: countdown with
// progress, and `confirm`, which asks the client (an elicitation on a session, an
// input_required round in 2026-07-28); then, from a client that declares the Tasks extension,
// countdown through callToolAsTask (mcp-edge-sessions/client): a task followed to its result
// in 2026-07-28, an inline answer in a session. Then a modern probe followed by a legacy
// session from one process: neither locks the other out.
// Usage: node scripts/ci/client-matrix.mjs [url]   (default http://localhost:8787/mcp; needs `npm run build`)
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { callToolAsTask, readTaskEvent, TASKS_EXTENSION } from '../../dist/client/index.js';

const MODES = [
  { label: 'legacy', mode: 'legacy' },
  { label: 'auto', mode: 'auto' },
  { label: 'pinned 2026-07-28', mode: { pin: '2026-07-28' } },
];

async function connect(url, mode) {
  const client = new Client(
    { name: 'client-matrix', version: '1.0.0' },
    { capabilities: { elicitation: {} }, versionNegotiation: { mode } },
  );
  const asked = [];
  client.setRequestHandler('elicitation/create', async (request) => {
    asked.push(request.params.message);
    return { action: 'accept', content: { ok: true } };
  });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return { client, asked };
}

/**
 * countdown through callToolAsTask, from a client that declares the Tasks extension: in
 * 2026-07-28 the server makes it a task, followed (tasks/stream, tasks/get) to its result, its
 * progress among the task's events; in a session it answers inline, with its progress.
 */
async function countdownAsTask(url, { label, mode }) {
  const client = new Client(
    { name: 'client-matrix', version: '1.0.0' },
    { capabilities: { extensions: { [TASKS_EXTENSION]: {} } }, versionNegotiation: { mode } },
  );
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  try {
    const version = client.getNegotiatedProtocolVersion();
    const inline = [];
    const events = [];
    const { result, task } = await callToolAsTask(
      client,
      { name: 'countdown', arguments: { from: 3, interval_ms: 50 } },
      // onprogress asks for progress (its token): inline it comes here, in a task as events.
      { url, call: { onprogress: (p) => inline.push(p.progress) }, onEvent: (event) => void events.push(readTaskEvent(event)) },
    );
    const progress = task === undefined ? inline : events.filter((event) => event?.kind === 'progress').map((event) => event.progress);
    const counted = result.content?.[0]?.text;
    const how = task === undefined ? 'inline' : `task ${task.status}, ${events.length} events`;
    console.log(
      `${label.padEnd(18)} ${version}: callToolAsTask countdown → ${how}, progress ${JSON.stringify(progress)} → ${JSON.stringify(counted)}`,
    );
    if (counted !== 'liftoff after 3' || JSON.stringify(progress) !== '[1,2,3]') throw new Error(`${label}: countdown as a task`);
    // The server makes tasks only in 2026-07-28: there it must have, and nowhere else.
    if ((version === '2026-07-28') !== (task?.status === 'completed')) throw new Error(`${label}: a task in ${version}: ${task?.status}`);
  } finally {
    await client.close();
  }
}

/** One era mode: countdown with progress and, where the server has it (the demo), `confirm`. */
async function exercise(url, { label, mode }, { confirm }) {
  const { client, asked } = await connect(url, mode);
  try {
    const version = client.getNegotiatedProtocolVersion();
    const progress = [];
    const countdown = await client.callTool(
      { name: 'countdown', arguments: { from: 3, interval_ms: 50 } },
      { onprogress: (p) => progress.push(p.progress) },
    );
    const counted = countdown.content?.[0]?.text;
    if (JSON.stringify(progress) !== '[1,2,3]' || counted !== 'liftoff after 3') throw new Error(`${label}: countdown`);
    if (!confirm) {
      console.log(`${label.padEnd(18)} ${version}: countdown progress ${JSON.stringify(progress)} → ${JSON.stringify(counted)}`);
      return version;
    }
    const confirmed = (await client.callTool({ name: 'confirm', arguments: { action: 'deploy' } })).content?.[0]?.text;
    console.log(
      `${label.padEnd(18)} ${version}: countdown progress ${JSON.stringify(progress)} → ${JSON.stringify(counted)}; confirm asked ${JSON.stringify(asked)} → ${JSON.stringify(confirmed)}`,
    );
    if (asked.length !== 1 || confirmed !== 'confirmed: deploy') throw new Error(`${label}: confirm`);
    return version;
  } finally {
    await client.close();
  }
}

/**
 * The three era modes in turn; legacy must get a session, pinned modern 2026-07-28. `confirm:
 * false` for a server without the demo's `confirm` tool (a project `init` wrote); `tasks: false`
 * for one whose countdown is never a task (`init --no-tasks`).
 */
export async function eraModes(url, { confirm = true, tasks = true } = {}) {
  const versions = [];
  for (const mode of MODES) {
    versions.push(await exercise(url, mode, { confirm }));
    if (tasks) await countdownAsTask(url, mode);
  }
  if (versions[0] === '2026-07-28' || versions[2] !== '2026-07-28') throw new Error(`eras: ${versions.join(', ')}`);
}

export async function clientMatrix(url) {
  await eraModes(url);
  // A modern probe, then a legacy session while the modern client is still connected, from
  // one process: neither era locks the other out.
  const modern = await connect(url, { pin: '2026-07-28' });
  try {
    const probed = await modern.client.listTools();
    const legacy = await connect(url, 'legacy');
    try {
      const [again, listed] = await Promise.all([modern.client.listTools(), legacy.client.listTools()]);
      console.log(
        `modern then legacy: ${modern.client.getNegotiatedProtocolVersion()} lists ${probed.tools.length} tools (${again.tools.length} again), ` +
          `then ${legacy.client.getNegotiatedProtocolVersion()} lists ${listed.tools.length}`,
      );
      if (legacy.client.getNegotiatedProtocolVersion() === '2026-07-28') throw new Error('the legacy client was served modern');
    } finally {
      await legacy.client.close();
    }
  } finally {
    await modern.client.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await clientMatrix(process.argv[2] ?? 'http://localhost:8787/mcp');
}
