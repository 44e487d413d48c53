/**
 * mulberry32: a small seeded PRNG, so a run that fails replays with the same choices. Shared by
 * the storms of test/session/attach-race.test.ts and scripts/faults/race.mjs, and the faults of
 * scripts/faults/fault-proxy.mjs (Node 24 runs this file as is). Values in [0, 1).
 */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
