// The order in which round `i` of an interleaved workload visits its `n` peers (W0, W1, W3, M1,
// M3, T1–T3, E1): a permutation drawn afresh for each round, from a generator seeded by `i`, so
// that a run is repeatable. Rotating one fixed order, as the workloads did before, changed who
// went first but not who went before whom: each peer always followed the same one, and a call
// pays for what the call before it left in the CPU's caches (2026-12-07: with every peer, the
// peer listed first — ours — paid about 8% for always following the heaviest peer, McpAgent;
// bench/README.md, *W1 depends on which peer a call follows*). Drawn at random, every peer
// follows every other equally often, on average.
// (TypeScript imported as is: the harness runs on the project's Node 24.)
import { seededRandom } from '../../test/support/seeded-random.ts';

/** A permutation of 0 … n − 1 for round `i` (any integer; negative rounds are warm-ups). */
export function roundOrder(i, n) {
  const order = Array.from({ length: n }, (_, k) => k);
  const next = seededRandom(0x9e3779b9 ^ i);
  for (let k = n - 1; k > 0; k--) {
    const j = Math.floor(next() * (k + 1));
    [order[k], order[j]] = [order[j], order[k]];
  }
  return order;
}
