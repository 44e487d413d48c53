// The soak's `events` client (scripts/faults/soak.mjs --clients events): --events N (default
// 1,000) notes posted one at a time straight at the server (`post_note`, 2026-07-28, never
// faulted), while --followers F (4) push followers (`followEvents`, dist/client) follow them
// through the fault proxy, which cuts `rate` of its SSE answers — the `events/stream` responses,
// each reopened by its follower with its last cursor and cut again at the same rate — and each
// stream is also dropped under its follower at a random moment within CUT_WITHIN_MS (seeded), so
// that every follower reopens tens of times while notes keep coming. The server
// runs with EVENTS_HEARTBEAT_MS=1000 and the followers know it, so a half-open stream is found
// silent after 2 s, not 30. Counted over what each follower's application saw:
//   lost           notes posted (their post_note returned) never delivered
//   duplicates     a note delivered twice (by eventId)
//   out of order   a note delivered after a later one
//   wrong          an eventId delivered as another note's
// One line per profile:
//   soak: <N> events × <F> followers, <lost> lost, <dup> duplicates, <order> out of order, <wrong> wrong (events, <profile>, …)
// Exit 1 (through soak.mjs) unless all four are 0.
import { seededRandom } from '../../test/support/seeded-random.ts';
import { startFaultProxy } from './fault-proxy.mjs';
import { eventFigures, postNote, settle, startFollower } from './event-follow.mjs';

export const SOAK_HEARTBEAT_MS = 1_000;
const CUT_WITHIN_MS = 1_500;

export async function soakEvents(direct, profile, { events, followers: followerCount, rate, seed, settleMs = 60_000 }) {
  const proxy = await startFaultProxy({ target: direct, profile, rate, seed, handshakes: true });
  const tag = `soak-${profile}-${seed}-${Date.now()}`;
  const figures = { lost: 0, duplicates: 0, outOfOrder: 0, wrong: 0 };
  let reopened = 0;
  try {
    const random = seededRandom(seed);
    const followers = Array.from({ length: followerCount }, () =>
      startFollower(proxy.url, tag, { heartbeatMs: SOAK_HEARTBEAT_MS, cutWithinMs: CUT_WITHIN_MS, random }),
    );
    await Promise.all(followers.map((follower) => follower.ready));
    const ids = [];
    for (let i = 0; i < events; i++) {
      ids.push(await postNote(direct, tag, i));
      // Spread over time, so that the cuts land between, before and during deliveries.
      if (i % 10 === 9) await new Promise((resolve) => setTimeout(resolve, 5));
    }
    for (const follower of followers) {
      await settle(follower, events, settleMs);
      const ended = await follower.stop();
      if (ended instanceof Error) console.error(`  follower ended with ${ended.name}: ${ended.message}`);
      reopened += follower.opened - 1;
      for (const [name, value] of Object.entries(eventFigures(follower.seen, ids))) figures[name] += value;
    }
    proxy.closeAll();
  } finally {
    await proxy.close();
  }
  console.log(
    `soak: ${events} events × ${followerCount} followers, ${figures.lost} lost, ${figures.duplicates} duplicates, ${figures.outOfOrder} out of order, ${figures.wrong} wrong (events, ${profile}, ${proxy.stats.faulted} of ${proxy.stats.responses} responses faulted, ${reopened} streams reopened, seed ${seed})`,
  );
  return figures;
}
