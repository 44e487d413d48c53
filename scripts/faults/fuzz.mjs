// The long fuzz run: test/fuzz/edge-fuzz.test.ts's fuzzer (test/fuzz/fuzz-*.ts, run as is
// by Node 24's type stripping) against `wrangler dev` on loopback, over real HTTP.
// Prints one line — requests, 5xx, leaks, sessions without initialize, broken sessions, seed —
// and exits 1 if any count but the first is non-zero.
//
// Then the tasks/stream phase (scripts/faults/task-follow-fuzz.mjs): generated `tasks/stream`
// requests — random taskId (real, spoiled, never issued, any string, unicode, huge, not a
// string, missing) and `after` (omitted, within a real timeline, its last event, past it,
// negative, fractional, huge, strings, null, arrays, raw NaN/Infinity/01) — against real tasks
// (ended, waiting in input_required, working) and unknown ones, each answer checked against what
// it must be (-32602 for bad params, the unknown-task error tasks/get gives, the events right
// after the cursor, events_gone never: nothing is dropped), every stream read for a bounded time.
// It prints a second line — requests, 5xx, wrong answers, unknown-task errors unlike tasks/get,
// events_gone, streams of ended tasks that did not end — and any of those non-zero exits 1.
//
// Usage: node scripts/faults/fuzz.mjs [--requests N] [--task-requests T] [--seed S] [--concurrency C] [--port P]
//   (default 100,000 requests then 5,000 generated tasks/stream requests — plus, beside each
//   aimed at an unknown task, the tasks/get it is compared with —, a random seed, 8 sequences at
//   a time, port 8823 or FUZZ_PORT; --requests 0 runs only the tasks/stream phase,
//   --task-requests 0 none of it)
// A run replays with the seed it printed, up to the interleaving of its concurrent sequences;
// every violation is printed with its whole request, which is the reproduction.
// Bounded: an SSE answer is read for at most 2 s and any other within 10 s, and an answer whose
// headers take 30 s is a failure; the witnesses are checked every ~5,000 requests and at the end.
// About 8–9 minutes for 100,000 on 2 cores, then about a minute for the tasks/stream phase.
import { parseArgs } from 'node:util';
import http from 'node:http';
import { Readable } from 'node:stream';
import fc from 'fast-check';
import { withDevServer } from '../support/dev-server.mjs';
import { sequenceArb } from '../../test/fuzz/fuzz-actions.ts';
import { CLIENT_REFUSAL, LEGACY_VERSIONS, summary } from '../../test/fuzz/fuzz-types.ts';
import { checkWitness, openWitness } from '../../test/fuzz/fuzz-witness.ts';
import { FuzzWorld } from '../../test/fuzz/fuzz-world.ts';
import { fuzzTaskStreams } from './task-follow-fuzz.mjs';

const { values } = parseArgs({
  options: {
    requests: { type: 'string', default: '100000' },
    'task-requests': { type: 'string', default: '5000' },
    seed: { type: 'string' },
    concurrency: { type: 'string', default: '8' },
    port: { type: 'string', default: process.env.FUZZ_PORT ?? '8823' },
  },
});
const total = Number(values.requests);
const seed = values.seed === undefined ? Math.floor(Math.random() * 2 ** 31) : Number(values.seed);
const concurrency = Number(values.concurrency);
const taskRequests = Number(values['task-requests']);
if (
  !Number.isSafeInteger(total) ||
  total < 0 ||
  !Number.isSafeInteger(taskRequests) ||
  taskRequests < 0 ||
  !Number.isSafeInteger(seed) ||
  !(concurrency >= 1)
) {
  console.error('usage: node scripts/faults/fuzz.mjs [--requests N] [--task-requests T] [--seed S] [--concurrency C] [--port P]');
  process.exit(2);
}
// What `npm run conformance` sets: no metrics, no network lookups, no banner, no config in $HOME.
process.env.WRANGLER_SEND_METRICS ??= 'false';
process.env.CLOUDFLARE_CF_FETCH_ENABLED ??= 'false';
process.env.WRANGLER_HIDE_BANNER ??= 'true';
process.env.XDG_CONFIG_HOME ??= '.cache/xdg';

/** Sequences generated at a time from one derived seed: enough that fast-check's bias toward small values early in a sample averages out. */
const CHUNK = 200;
const CHECK_EVERY = 5_000;
/** Violations printed in full (all are counted). */
const MAX_PRINTED = 50;
const HEADERS_TIMEOUT_MS = 30_000;

const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

const refusal = (error) => Object.assign(new Error(String(error?.message ?? error)), { name: CLIENT_REFUSAL });

/**
 * Host values that reach a Worker: a DNS name or an IP literal, with an optional port. Others
 * are refused before any Worker runs — by Cloudflare's front end in production, and under
 * `wrangler dev` by workerd (a plain-text `500 Internal Server Error` with `Connection: close`,
 * e.g. for `Host: a.1`, which a URL parser takes for a bad IPv4 address) or by Miniflare's
 * entry worker (a 500 with its own stack: `TypeError: Fetch API cannot load: http://8{jpn/mcp
 * at Object.fetch (…/miniflare/dist/src/workers/core/entry.worker.js…)`). Those are the dev
 * server's, not the Worker's, so they are not sent here; the in-workerd test sends any Host
 * straight to the Worker.
 */
function deliverableHost(value) {
  const match = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(?::\d{1,5})?$/.exec(value);
  if (match === null) return false;
  if (match[1].startsWith('[')) return true;
  const labels = match[1].replace(/\.$/, '').split('.');
  if (labels.includes('')) return false;
  // WHATWG URL: a host whose last label is a number is an IPv4 address, and must be a valid one.
  if (/^(?:\d+|0x[0-9a-f]*)$/i.test(labels.at(-1)))
    return labels.length === 4 && labels.every((l) => /^(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/.test(l));
  return true;
}

/**
 * `fetch` over node:http: undici's fetch drops a Host header, and the fuzz sends any Host. A
 * streamed body goes chunked, without Content-Length; any other with its length.
 */
async function httpFetch(request, { streamed = false } = {}) {
  const url = new URL(request.url);
  const headers = {};
  for (const [name, value] of request.headers) headers[name] = value;
  if ('host' in headers && !deliverableHost(headers.host)) throw refusal(`Host ${JSON.stringify(headers.host)} would not reach a Worker`);
  const body = request.body === null ? undefined : Buffer.from(await request.arrayBuffer());
  if (body !== undefined) {
    if (streamed) headers['transfer-encoding'] = 'chunked';
    else headers['content-length'] = String(body.length);
  }
  let outgoing;
  try {
    outgoing = http.request({
      host: url.hostname,
      port: url.port,
      path: `${url.pathname}${url.search}`,
      method: request.method,
      headers,
      agent,
      setHost: !('host' in headers),
    });
  } catch (error) {
    throw refusal(error); // a method or header node:http will not send
  }
  return new Promise((resolve, reject) => {
    outgoing.setTimeout(HEADERS_TIMEOUT_MS, () => outgoing.destroy(new Error(`no answer within ${HEADERS_TIMEOUT_MS} ms`)));
    outgoing.on('error', reject);
    outgoing.on('response', (incoming) => {
      outgoing.setTimeout(0);
      const responseHeaders = new Headers();
      for (let i = 0; i < incoming.rawHeaders.length; i += 2) {
        try {
          responseHeaders.append(incoming.rawHeaders[i], incoming.rawHeaders[i + 1]);
        } catch {
          // a header value Headers will not hold; the status and body still count
        }
      }
      const status = incoming.statusCode ?? 0;
      const noBody = request.method === 'HEAD' || [101, 204, 205, 304].includes(status);
      if (noBody) incoming.resume();
      const response = new Response(noBody ? null : Readable.toWeb(incoming), { status: 200, headers: responseHeaders });
      // Response() takes 200–599 only; the fuzz judges whatever the server said.
      Object.defineProperty(response, 'status', { value: status });
      resolve(response);
    });
    if (body === undefined) outgoing.end();
    else {
      outgoing.write(body);
      outgoing.end();
    }
  });
}

// withDevServer stops wrangler on exit; a signal's default action would skip that.
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => process.exit(130));

const started = Date.now();
let line;
let taskLine;
let failed = false;
await withDevServer(
  Number(values.port),
  async (url) => {
    const origin = new URL(url).origin;
    const world = new FuzzWorld({ fetch: httpFetch, origin, idleMs: 100 });
    // Witnesses, one per sessionful revision: the fuzz uses them but never deletes them, and
    // they are checked every CHECK_EVERY requests (each check leaves a fresh stream to replay
    // next time, so a check never depends on how long the run has been).
    let witnesses = [];
    for (const version of LEGACY_VERSIONS) {
      const witness = await openWitness(httpFetch, origin, version);
      witnesses.push(witness);
      world.protect(witness);
      world.adopt(await openWitness(httpFetch, origin, version));
    }
    const broken = new Set();
    const check = async () => {
      const next = [];
      for (const witness of witnesses) {
        const { problems, next: fresh } = await checkWitness(httpFetch, origin, witness);
        if (problems.length > 0) {
          broken.add(witness.id);
          console.error(
            `broken session ${witness.id} (${witness.version}) after ${world.tally.requests} requests:\n  ${problems.join('\n  ')}`,
          );
        }
        next.push(fresh);
      }
      witnesses = next;
      world.tally.broken = broken.size;
    };

    // Requests handed out, so concurrent sequences stop at exactly `total`.
    let handedOut = 0;
    let printed = 0;
    let chunk = 0;
    let nextCheck = CHECK_EVERY;
    let nextProgress = 10_000;
    while (handedOut < total) {
      // Derived seeds: chunk k of seed S is the same sequences on every run.
      const queue = fc.sample(sequenceArb(24), { seed: (seed + chunk * 7_919) | 0, numRuns: CHUNK });
      chunk++;
      const worker = async () => {
        for (let actions = queue.shift(); actions !== undefined; actions = queue.shift()) {
          for (const action of actions) {
            if (handedOut >= total) return;
            handedOut++;
            const { sent, violations } = await world.run(world.guard(action));
            if (!sent) handedOut--;
            for (const v of violations) {
              if (printed++ < MAX_PRINTED) console.error(`${v.kind}: ${v.what}\n  request: ${v.request}\n  answer: ${v.answer}`);
            }
          }
          if (world.tally.requests >= nextCheck) return; // the check runs with no request in flight
        }
      };
      while (queue.length > 0 && handedOut < total) {
        await Promise.all(Array.from({ length: concurrency }, worker));
        if (world.tally.requests >= nextCheck) {
          await check();
          nextCheck += CHECK_EVERY;
        }
        if (world.tally.requests >= nextProgress) {
          const seconds = (Date.now() - started) / 1000;
          console.error(`… ${world.tally.requests} requests in ${seconds.toFixed(0)} s (${(world.tally.requests / seconds).toFixed(0)}/s)`);
          nextProgress += 10_000;
        }
      }
    }
    await check();
    line = summary(world.tally, seed);
    const t = world.tally;
    failed = t.fiveXX + t.leaks + t.withoutInitialize + t.broken > 0;
    if (process.env.FUZZ_VERBOSE) {
      console.error(Object.fromEntries([...world.statuses].sort()));
      console.error([...world.refusals].sort((a, b) => b[1] - a[1]).slice(0, 60));
    }
    if (t.skipped > 0) console.error(`(${t.skipped} generated requests the client would not send, skipped)`);
    if (taskRequests > 0) {
      const tasks = await fuzzTaskStreams(url, { requests: taskRequests, seed });
      taskLine = tasks.line;
      if (tasks.failed) failed = true;
    }
  },
  // Thousands of requests from one loopback address, its tasks/stream streams left at their
  // quiet timeout faster than the Worker notices (a waiting task's stream writes only
  // heartbeats): no share of an isolate's streams per address (MAX_STREAMS_PER_PRINCIPAL), which
  // would answer 429 where the fuzz judges each request's own answer. The share is tested in
  // test/auth/held-stream-shares.test.ts and test/buffered/listen-shares.test.ts.
  { args: ['--var', 'MAX_STREAMS_PER_PRINCIPAL:0'] },
);
agent.destroy();
console.log(line);
if (taskLine !== undefined) console.log(taskLine);
console.error(`(${((Date.now() - started) / 1000).toFixed(1)} s, wrangler dev's start included)`);
process.exit(failed ? 1 : 0);
