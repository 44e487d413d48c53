// restarts.mjs's events part (--event-kills K, default 3): a push follower (`followEvents`,
// dist/client) follows the notes of one run while notes are posted, the server is SIGKILLed and
// started again on the same state between two posts, and more are posted after. Every note whose
// post_note returned is stored (emit returns after the row commits), so the follower — whose
// stream the kill cut, and which reopens it with its cursor once the server is back — must
// receive each one once, in order: "every occurrence whose emit returned is delivered after the
// restart". One line per kill; the figures are summed by restarts.mjs.
import { eventFigures, postNote, settle, startFollower } from './event-follow.mjs';

/** Notes posted before the kill and after the restart. */
const BEFORE = 25;
const AFTER = 25;

export async function killBetweenEmits(url, kill, restart, { heartbeatMs }) {
  const tag = `restart-${kill}-${Date.now()}`;
  const follower = startFollower(url, tag, {
    heartbeatMs,
    // The server is away for a few seconds: keep trying, a little at a time.
    reconnect: { initialDelayMs: 50, maxDelayMs: 500, factor: 1.5, maxAttempts: 200 },
  });
  await follower.ready;
  const ids = [];
  for (let i = 0; i < BEFORE; i++) ids.push(await postNote(url, tag, i));
  await restart();
  for (let i = BEFORE; i < BEFORE + AFTER; i++) ids.push(await postNote(url, tag, i));
  await settle(follower, ids.length, 30_000);
  const ended = await follower.stop();
  const figures = eventFigures(follower.seen, ids);
  const problem = ended instanceof Error ? ` (follower ended: ${ended.name}: ${ended.message})` : '';
  return {
    figures: { ...figures, failures: ended instanceof Error ? 1 : 0 },
    line: `event kill ${kill}: ${ids.length} posted, ${follower.seen.length} delivered, ${figures.lost} lost, ${figures.duplicates} duplicates, ${figures.outOfOrder} out of order, ${follower.opened} streams opened${problem}`,
  };
}
