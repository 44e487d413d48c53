// Starts `wrangler dev` on loopback for a bounded time, hands its URL to a callback, and
// always stops it (the whole process group) afterwards. By default it serves the library's
// fixture server (test/fixture-server): the demo tools and the conformance suite's fixtures;
// `config` names another wrangler config (the demo's, for the client matrix); `args` are
// more of wrangler dev's arguments (`--var NAME:value`); `project` runs another project's own
// `npm run dev` in its folder instead (one `init` wrote, for scripts/ci/check-package.mjs).
import { spawn } from 'node:child_process';
import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

const READY_TIMEOUT_MS = 90_000;
const FIXTURE_CONFIG = 'test/fixture-server/wrangler.toml';

export async function withDevServer(port, callback, { config = FIXTURE_CONFIG, args = [], project } = {}) {
  const url = `http://localhost:${port}/mcp`;
  // Another server on the port would answer in this one's place.
  if (await portInUse(port)) throw new Error(`port ${port} is in use: set the script's port variable`);
  const log = [];
  const listen = ['--ip', '127.0.0.1', '--port', String(port), ...args];
  const [command, commandArgs] =
    project === undefined ? ['npx', ['wrangler', 'dev', '-c', config, ...listen]] : ['npm', ['run', 'dev', '--', ...listen]];
  const dev = spawn(command, commandArgs, {
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
    ...(project !== undefined && { cwd: project }),
  });
  dev.stdout.on('data', (chunk) => log.push(String(chunk)));
  dev.stderr.on('data', (chunk) => log.push(String(chunk)));
  const stop = () => {
    try {
      process.kill(-dev.pid, 'SIGTERM');
    } catch {
      // already gone
    }
  };
  process.on('exit', stop);
  try {
    await waitUntilReady(url, dev);
    return await callback(url);
  } catch (error) {
    console.error(log.join('').split('\n').slice(-40).join('\n'));
    throw error;
  } finally {
    stop();
  }
}

/**
 * The fixture server under `wrangler dev` on loopback, its state persisted in `state` so that a
 * server killed with SIGKILL (killGroup) starts again on the same storage: the restarts runs.
 * `vars` are set with `--var`. Resolves with the process once it answers.
 */
export async function startPersistedFixture({ port, state, vars = {} }) {
  const dev = spawn(
    'npx',
    [
      'wrangler',
      'dev',
      '-c',
      FIXTURE_CONFIG,
      '--ip',
      '127.0.0.1',
      '--port',
      String(port),
      '--persist-to',
      state,
      ...Object.entries(vars).flatMap(([name, value]) => ['--var', `${name}:${value}`]),
    ],
    { stdio: ['ignore', 'ignore', 'ignore'], detached: true },
  );
  await waitUntilReady(`http://localhost:${port}/mcp`, dev);
  return dev;
}

export async function waitUntilReady(url, dev) {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (dev.exitCode !== null) throw new Error(`wrangler dev exited with ${dev.exitCode}`);
    try {
      // A 400 (no session id) proves the Worker is up without starting a session.
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
        body: '{}',
      });
      if (response.status < 500) return;
    } catch {
      // not listening yet
    }
    await sleep(500);
  }
  throw new Error(`wrangler dev was not ready within ${READY_TIMEOUT_MS} ms`);
}

/** Whether something already listens on the loopback port. */
export function portInUse(port) {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.end();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** Sends `signal` to a detached child's whole process group (npm, wrangler, workerd) and waits until none is left. */
export async function killGroup(child, signal = 'SIGKILL') {
  process.kill(-child.pid, signal);
  for (let waited = 0; waited < 10_000; waited += 100) {
    try {
      process.kill(-child.pid, 0);
    } catch {
      return;
    }
    await sleep(100);
  }
  throw new Error('the server did not stop');
}
