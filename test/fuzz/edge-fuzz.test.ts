/**
 * Fuzzing the Worker in workerd, the short variant (scripts/faults/fuzz.mjs is the long one, against
 * `wrangler dev`): fast-check sequences of whole HTTP requests — any method, path, Accept,
 * Content-Type, MCP-Protocol-Version, Mcp-Session-Id, Last-Event-ID, Mcp-Method, Mcp-Name,
 * Origin and Host, bodies of bytes, JSON, JSON-RPC right and wrong, batches, huge ids — naming
 * real sessions and cursors that earlier requests of the sequence were given, spoiled ones, and
 * ones never issued. Every answer is judged as it arrives (test/fuzz/fuzz-world.ts): never
 * a 5xx, nothing internal in a body and every error body the wire contract's, never a session
 * without initialize. A session opened before the fuzz must work exactly as before after it.
 *
 * The seed is fixed, so a failure replays with the whole run. The sessions and cursors live
 * across sequences (later ones use what earlier ones were given), so a shrunk counterexample
 * may lean on state an earlier sequence left: the violation's request and answer, printed in
 * full, are the reproduction.
 */
import { exports } from 'cloudflare:workers';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sequenceArb } from './fuzz-actions.ts';
import { LEGACY_VERSIONS, summary, type Fetcher } from './fuzz-types.ts';
import { checkWitness, openWitness, type Witness } from './fuzz-witness.ts';
import { FuzzWorld } from './fuzz-world.ts';

const SEED = 20_261_117;
/** Sequences of 1 to 24 requests: about 1,900 requests in all, 13–20 s on 2 busy cores. */
const RUNS = 150;
const MAX_SEQUENCE = 24;

const ORIGIN = 'http://localhost';
const fetchWorker: Fetcher = (request) => exports.default.fetch(request);

describe('the Worker under fuzzed requests', () => {
  const world = new FuzzWorld({ fetch: fetchWorker, origin: ORIGIN, idleMs: 50 });
  const witnesses: Witness[] = [];

  it('opens a witness session of every sessionful revision, and a pool of sessions to abuse, before the fuzz', async () => {
    // Witnesses: the fuzz sends them anything but DELETE, and they must work as before after it.
    // The pool: sessions the fuzz may also delete (a 2025-03-26 one takes batches).
    for (const version of LEGACY_VERSIONS) {
      const witness = await openWitness(fetchWorker, ORIGIN, version);
      witnesses.push(witness);
      world.protect(witness);
      world.adopt(await openWitness(fetchWorker, ORIGIN, version));
    }
  });

  it('never answers a fuzzed request with a 5xx, internal detail, or a session nobody initialized', { timeout: 120_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(sequenceArb(MAX_SEQUENCE), async (actions) => {
        for (const action of actions) {
          const { violations } = await world.run(world.guard(action));
          // Thrown, so fast-check shrinks the sequence and reports the seed and path to replay it.
          if (violations.length > 0)
            throw new Error(violations.map((v) => `${v.kind}: ${v.what}\n  request: ${v.request}\n  answer: ${v.answer}`).join('\n'));
        }
      }),
      { seed: SEED, numRuns: RUNS },
    );
    // Shown only when a test of the file fails (vitest's `silent: 'passed-only'`).
    console.log(summary(world.tally, SEED), Object.fromEntries([...world.statuses].sort()));
    expect(world.tally).toMatchObject({ fiveXX: 0, leaks: 0, withoutInitialize: 0 });
  });

  it('reached past the edge: sessions opened, calls answered, cursors resumed and refused, sessions deleted', () => {
    // A fuzzer refused at the first check proves nothing about the objects behind it.
    const count = (key: string) => world.statuses.get(key) ?? 0;
    expect(world.tally.requests).toBeGreaterThan(1_000);
    expect(world.issued.size, 'initialize requests among the fuzz opened sessions').toBeGreaterThan(10);
    expect(world.tally.resumed, 'GETs resumed from a cursor').toBeGreaterThan(0);
    for (const key of [
      'POST 200',
      'POST 202',
      'POST 400',
      'POST 404',
      'POST 409',
      'GET 200',
      'GET 400',
      'GET 404',
      'GET 409',
      'DELETE 204',
    ]) {
      expect(count(key), key).toBeGreaterThan(0);
    }
  });

  it('leaves the sessions opened before the fuzz answering ping and echo, and replaying their streams', async () => {
    for (const witness of witnesses) {
      const { problems } = await checkWitness(fetchWorker, ORIGIN, witness);
      expect(problems, `witness ${witness.version}`).toEqual([]);
    }
  });
});
