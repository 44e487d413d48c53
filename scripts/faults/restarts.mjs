// Hard restarts: `wrangler dev` (the fixture server, state persisted in a temporary folder) is
// killed with SIGKILL mid-call and started again on the same state, `--kills` times (default
// 20). Each time, a call is running in one of several sessions; after the restart its stream is
// resumed from the last event the client saw, and must replay gap-free up to an explicit
// `request_interrupted` error in a new epoch; every other session must keep working. Then
// `--task-kills` times (default 3) it is killed mid-`tasks/stream` (scripts/faults/task-follow-restarts.mjs):
// a long task's event stream, resumed after the restart with `after` = the last seq seen, must
// replay every stored event after it, gap-free and each once, then the terminal `failed` status
// event (`task_interrupted`) and the stream's result; never `completed`, never a re-run's events,
// and a full replay from seq 0 the same. Loopback only; every wait bounded. Prints
//   restarts: <K> kills, <I> interruptions reported, <G> gaps, <B> broken sessions; <T> task stream kills,
//     <TI> task interruptions reported, <TG> task gaps, <TR> repeated events, <TX> re-runs, <TD> replay differences
// (one line) and exits 1 unless every kill was reported as an interruption and nothing else went
// wrong. Then `--event-kills` times (default 3) it is killed between two posts of notes a push
// follower follows (scripts/faults/event-restarts.mjs): every note posted before the kill and
// after the restart is delivered to it once, in order. Then `--webhook-kills` times (default 2) it is
// killed while webhook deliveries are retrying or held (scripts/faults/webhook-restarts.mjs): every
// note is processed once by each subscription, a no-expiry one included, with no refresh after the
// restart. `--kills 0 --task-kills 3` runs only the task part. ~90 s with the defaults on 2
// cores (a kill ~3 s, a task kill ~6 s: the restart, the streams and a 1 s re-run check).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { killGroup, startPersistedFixture } from '../support/dev-server.mjs';
import { JSON_HEADERS, openRawSession, readEvents } from '../support/raw-session.mjs';
import { killBetweenEmits } from './event-restarts.mjs';
import { killDuringWebhooks } from './webhook-restarts.mjs';
import { killMidTaskStream } from './task-follow-restarts.mjs';

const { values } = parseArgs({
  options: {
    kills: { type: 'string', default: '20' },
    sessions: { type: 'string', default: '4' },
    'task-kills': { type: 'string', default: '3' },
    'event-kills': { type: 'string', default: '3' },
    'webhook-kills': { type: 'string', default: '2' },
  },
});
const kills = Number(values.kills);
const taskKills = Number(values['task-kills']);
const eventKills = Number(values['event-kills']);
const webhookKills = Number(values['webhook-kills']);
/** Heartbeats every second: a follower finds a stream the kill left half-open silent in 2 s. */
const EVENTS_HEARTBEAT_MS = 1_000;
const sessionCount = Number(values.sessions);
const port = Number(process.env.RESTARTS_PORT ?? 8801);
const url = `http://localhost:${port}/mcp`;
const state = mkdtempSync(join(tmpdir(), 'restarts-'));
let nextId = 1;

const start = () => startPersistedFixture({ port, state, vars: { EVENTS_HEARTBEAT_MS } });

const post = (body, headers = {}) =>
  fetch(url, { method: 'POST', headers: { ...JSON_HEADERS, ...headers }, body: JSON.stringify(body), signal: AbortSignal.timeout(15_000) });

/** A session's headers. */
const openSession = async () => (await openRawSession(url, 'restarts', { timeoutMs: 15_000 })).headers;

const parseId = (id) => id.split('-').map(Number);

/** Whether `events` continue `cursor` one by one in its stream (epoch may only move at the interruption). */
function gapFree(cursor, events) {
  const [, stream, seq] = parseId(cursor);
  let expected = seq;
  for (const { id } of events) {
    const [, s, n] = parseId(id);
    if (s !== stream) return false;
    if (n === expected) continue; // the priming event restates the cursor
    if (n !== expected + 1) return false;
    expected = n;
  }
  return true;
}

async function ping(headers) {
  const reply = await post(
    { jsonrpc: '2.0', id: nextId++, method: 'tools/call', params: { name: 'echo', arguments: { text: 'alive' } } },
    headers,
  );
  if (reply.status !== 200) return false;
  const events = await readEvents(reply);
  return events.some((event) => event.data.includes('"alive"'));
}

let dev;
let interruptions = 0;
let gaps = 0;
let broken = 0;
let failures = 0;
const task = { interrupted: 0, gaps: 0, repeats: 0, reruns: 0, differences: 0, failures: 0 };
const events = { lost: 0, duplicates: 0, outOfOrder: 0, wrong: 0, failures: 0 };
const webhooks = { lost: 0, duplicates: 0, signatureFailures: 0, failures: 0 };
try {
  dev = await start();
  const sessions = [];
  for (let i = 0; i < sessionCount; i++) sessions.push(await openSession());
  for (let kill_ = 1; kill_ <= kills; kill_++) {
    const headers = sessions[kill_ % sessions.length];
    const call = await post(
      {
        jsonrpc: '2.0',
        id: nextId++,
        method: 'tools/call',
        params: { name: 'countdown', arguments: { from: 100, interval_ms: 50 }, _meta: { progressToken: `k${kill_}` } },
      },
      headers,
    );
    const seen = await readEvents(call, { until: (events) => events.length >= 3 });
    const cursor = seen.at(-1).id;
    const epoch = parseId(cursor)[0];
    // The call goes on unread for a while (0–450 ms, different each time): what it stored
    // meanwhile must come back in the replay, before the interruption.
    await sleep((kill_ * 97) % 450);
    await killGroup(dev);
    dev = await start();
    const resumed = await fetch(url, {
      headers: { ...headers, Accept: 'text/event-stream', 'Last-Event-ID': cursor },
      signal: AbortSignal.timeout(15_000),
    });
    const rest = resumed.status === 200 ? await readEvents(resumed) : [];
    const last = rest.at(-1)?.data ?? '';
    let reported = false;
    try {
      const error = JSON.parse(last).error;
      reported = error?.data?.reason === 'request_interrupted' && error.data.epoch > epoch;
    } catch {
      // not JSON: not reported
    }
    if (reported) interruptions++;
    else failures++;
    if (!gapFree(cursor, rest)) gaps++;
    for (const other of sessions) if (!(await ping(other))) broken++;
    console.log(
      `kill ${kill_}: resumed after ${cursor}: ${rest.length} events, ${reported ? 'request_interrupted' : `NOT reported (${resumed.status})`}`,
    );
  }
  for (let kill_ = 1; kill_ <= taskKills; kill_++) {
    const { figures, line } = await killMidTaskStream(url, kill_, async () => {
      await killGroup(dev);
      dev = await start();
    });
    for (const [name, value] of Object.entries(figures)) task[name] += value;
    for (const other of sessions) if (!(await ping(other))) broken++;
    console.log(line);
  }
  for (let kill_ = 1; kill_ <= eventKills; kill_++) {
    const { figures, line } = await killBetweenEmits(
      url,
      kill_,
      async () => {
        await killGroup(dev);
        dev = await start();
      },
      { heartbeatMs: EVENTS_HEARTBEAT_MS },
    );
    for (const [name, value] of Object.entries(figures)) events[name] += value;
    console.log(line);
  }
  if (webhookKills > 0) {
    // Its own server (AUTH=jwt: only a principal subscribes); this one is stopped meanwhile (two workerd on 2 cores).
    await killGroup(dev);
    dev = undefined;
    const { figures, lines } = await killDuringWebhooks(webhookKills, { port: port + 2, receiverPort: port + 3 });
    for (const [name, value] of Object.entries(figures)) webhooks[name] += value;
    for (const line of lines) console.log(line);
  }
} catch (error) {
  console.error(String(error?.stack ?? error));
  failures++;
} finally {
  if (dev !== undefined) await killGroup(dev).catch(() => {});
  rmSync(state, { recursive: true, force: true });
}
console.log(
  `restarts: ${kills} kills, ${interruptions} interruptions reported, ${gaps} gaps, ${broken} broken sessions; ` +
    `${taskKills} task stream kills, ${task.interrupted} task interruptions reported, ${task.gaps} task gaps, ` +
    `${task.repeats} repeated events, ${task.reruns} re-runs, ${task.differences} replay differences; ` +
    `${eventKills} event kills, ${events.lost} lost, ${events.duplicates} duplicate, ${events.outOfOrder} out of order, ${events.wrong} wrong notes; ` +
    `${webhookKills} webhook kills, ${webhooks.lost} lost, ${webhooks.duplicates} processed twice, ${webhooks.signatureFailures} signature failures`,
);
const eventsOk = Object.values(events).every((value) => value === 0) && Object.values(webhooks).every((value) => value === 0);
const tasksOk = task.interrupted === taskKills && task.gaps + task.repeats + task.reruns + task.differences + task.failures === 0;
process.exit(failures === 0 && gaps === 0 && broken === 0 && interruptions === kills && tasksOk && eventsOk ? 0 : 1);
