// What the events runs of the reliability scripts share (soak.mjs's `events` client,
// restarts.mjs's kills between emits): notes posted straight at the server (`post_note`, a
// 2026-07-28 tools/call, never faulted: an emit that returned is stored), and push followers
// (`followEvents`, the package's client, dist/client) that record what their application saw.
// Each run's notes carry a tag and their index (`<tag> <i>`), posted one at a time, so the log's
// order is the index order and a follower selecting the tag (`contains`) must see 0..N-1 in order.
import { followEvents } from '../../dist/client/index.js';
import { answerOf, postModern } from './task-follow-raw.mjs';

/** Posts note `<tag> <i>`; its eventId once stored (throws otherwise). */
export async function postNote(url, tag, i) {
  const answer = await answerOf(
    await postModern(url, 'tools/call', { name: 'post_note', arguments: { text: `${tag} ${i}` } }, { name: 'post_note' }),
  );
  const eventId = answer?.result?.structuredContent?.eventId;
  if (typeof eventId !== 'string') throw new Error(`post_note answered ${JSON.stringify(answer)}`);
  return eventId;
}

/**
 * A push follower of the notes tagged `tag` through `url`, from now; `ready` resolves once it has
 * its first cursor (posts before then would not be its to see). Records each occurrence's index
 * and eventId in the order its application received them.
 */
export function startFollower(url, tag, { heartbeatMs, fetch: fetchLike = fetch, reconnect, cutWithinMs, random = Math.random } = {}) {
  const seen = [];
  const stop = new AbortController();
  let opened = 0;
  let markReady;
  const ready = new Promise((resolve) => {
    markReady = resolve;
  });
  // With `cutWithinMs`, every stream is also cut by the follower's side within that long: the
  // connection dropped under it, which it must answer by reopening from its cursor.
  const countingFetch = (input, init) => {
    if (!String(init?.body ?? '').includes('"events/stream"')) return fetchLike(input, init);
    opened++;
    if (cutWithinMs === undefined) return fetchLike(input, init);
    const cut = AbortSignal.timeout(Math.floor(random() * cutWithinMs));
    return fetchLike(input, { ...init, signal: init?.signal ? AbortSignal.any([init.signal, cut]) : cut });
  };
  const follow = followEvents({
    url,
    name: 'demo.note',
    arguments: { contains: tag },
    mode: 'push',
    cursor: null,
    fetch: countingFetch,
    heartbeatMs,
    signal: stop.signal,
    reconnect: reconnect ?? { initialDelayMs: 20, maxDelayMs: 500, factor: 1.5, maxAttempts: 200 },
    clientInfo: { name: 'event-faults', version: '1' },
    onEvent: (occurrence) => {
      seen.push({ i: Number(occurrence.data.text.split(' ').at(-1)), eventId: occurrence.eventId });
    },
    saveCursor: () => markReady(),
  });
  return {
    seen,
    ready,
    done: follow.done,
    get opened() {
      return opened;
    },
    stop: async () => {
      stop.abort();
      return follow.done.catch((error) => error);
    },
  };
}

/** Lost, duplicated and out-of-order occurrences of what `follower` saw, against the eventIds posted (index i at ids[i]). */
export function eventFigures(seen, ids) {
  const figures = { lost: 0, duplicates: 0, outOfOrder: 0, wrong: 0 };
  const byId = new Map();
  for (const { i, eventId } of seen) {
    byId.set(eventId, (byId.get(eventId) ?? 0) + 1);
    if (ids[i] !== eventId) figures.wrong++;
  }
  for (const count of byId.values()) figures.duplicates += count - 1;
  for (const id of ids) if (!byId.has(id)) figures.lost++;
  for (let k = 1; k < seen.length; k++) if (seen[k].i < seen[k - 1].i) figures.outOfOrder++;
  return figures;
}

/** Waits until `follower` saw `count` occurrences, or `ms` passed. */
export async function settle(follower, count, ms) {
  const deadline = Date.now() + ms;
  while (follower.seen.length < count && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
}
