// A task outlives a hard restart as its record says, never as a re-run: against `npm run dev`
// (the example) with its state persisted in a temporary folder, it
//   1. creates a long task (countdown), sees it running, SIGKILLs the whole server mid-task,
//      starts it again on the same state, and reads the task: `failed`, `task_interrupted`,
//      and the same 3 s later (it was not run again);
//   2. creates a short task, waits for `completed`, SIGKILLs and restarts the server again,
//      and reads the task: still `completed`, with the same result.
// Loopback only; every wait is bounded; the server is always stopped. Exit status 1 on any
// difference.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { killGroup, waitUntilReady } from '../support/dev-server.mjs';

const port = Number(process.env.TASK_RESTART_PORT ?? 8799);
const url = `http://localhost:${port}/mcp`;
const state = mkdtempSync(join(tmpdir(), 'task-restart-'));
const TASKS = { extensions: { 'io.modelcontextprotocol/tasks': {} } };
let nextId = 1;

/** One 2026-07-28 request; the JSON-RPC answer. */
async function request(method, params, name) {
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      'MCP-Protocol-Version': '2026-07-28',
      'Mcp-Method': method,
      'Mcp-Name': name,
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: nextId++,
      method,
      params: {
        ...params,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientCapabilities': TASKS,
          'io.modelcontextprotocol/clientInfo': { name: 'task-restart', version: '1' },
        },
      },
    }),
    signal: AbortSignal.timeout(10_000),
  });
  return response.json();
}

const getTask = async (taskId) => (await request('tasks/get', { taskId }, taskId)).result;

async function createTask(args) {
  const answer = await request('tools/call', { name: 'countdown', arguments: args }, 'countdown');
  if (answer.result?.resultType !== 'task') throw new Error(`expected a task, got ${JSON.stringify(answer)}`);
  return answer.result.taskId;
}

async function until(taskId, accept, what, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const task = await getTask(taskId);
    if (accept(task)) return task;
    if (Date.now() > deadline) throw new Error(`task did not become ${what}: ${JSON.stringify(task)}`);
    await sleep(200);
  }
}

/** `npm run dev` on the shared state, in its own process group (so SIGKILL reaches workerd too). */
async function start() {
  const dev = spawn('npm', ['run', 'dev', '--', '--port', String(port), '--persist-to', state], {
    stdio: ['ignore', 'ignore', 'pipe'],
    detached: true,
  });
  dev.stderr.on('data', () => {});
  await waitUntilReady(url, dev);
  return dev;
}

/** SIGKILL to every process of the server, and wait until none is left. */
let dev;
let failed = false;
const check = (ok, line) => {
  console.log(`${ok ? 'ok ' : 'NOT'} ${line}`);
  if (!ok) failed = true;
};
try {
  dev = await start();
  const long = await createTask({ from: 600, interval_ms: 500 });
  const running = await until(long, (task) => task.statusMessage !== undefined, 'running');
  console.log(`task ${long.slice(0, 8)}… running (${running.status}, statusMessage ${running.statusMessage}); SIGKILL`);
  await killGroup(dev);
  dev = await start();
  const interrupted = await getTask(long);
  check(
    interrupted.status === 'failed' && interrupted.error?.data?.reason === 'task_interrupted',
    `after the restart: ${interrupted.status}, ${JSON.stringify(interrupted.error)}`,
  );
  // A re-run would report progress again (statusMessage, lastUpdatedAt): nothing may move.
  await sleep(3_000);
  const later = await getTask(long);
  check(JSON.stringify(later) === JSON.stringify(interrupted), `3 s later, unchanged (not re-run): ${later.lastUpdatedAt}`);

  const short = await createTask({ from: 2, interval_ms: 100 });
  const completed = await until(short, (task) => task.status === 'completed', 'completed');
  console.log(`task ${short.slice(0, 8)}… completed: ${JSON.stringify(completed.result)}; SIGKILL`);
  await killGroup(dev);
  dev = await start();
  const kept = await getTask(short);
  check(
    kept.status === 'completed' && JSON.stringify(kept.result) === JSON.stringify(completed.result),
    `after the restart: ${kept.status}, ${JSON.stringify(kept.result)}`,
  );
} catch (error) {
  console.error(String(error));
  failed = true;
} finally {
  if (dev !== undefined) await killGroup(dev).catch(() => {});
  rmSync(state, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
