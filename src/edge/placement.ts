/**
 * Which environment a namespace's placement (core/placement.ts: DO_JURISDICTION,
 * DO_LOCATION_HINT) is read from, so that the Worker and every object reach one object by one
 * name — a name derived in another jurisdiction, or in none, is another object:
 * - the Worker: edge-state.ts places each binding its accessors read, once per environment;
 * - an object that reaches another namespace (an event log poking its webhook subscriptions, a
 *   subscription reading its log): its own `env`, which holds the Worker's variables;
 * - a namespace handed over bare — `type.emit(env.MCP_EVENTS, …)`, `resetEventLog`, a
 *   `PrincipalControl` of the user's own, {@link placedNamespace} — the Worker's environment
 *   (`cloudflare:workers`): a tool, an alarm or a cron handler may hold no `env` the library
 *   read, and one Worker script has one set of variables. A namespace placed already passes as it is.
 * A variable that does not parse is the configuration error that names it, wherever it is read.
 */
import { env as workerEnv } from 'cloudflare:workers';
import { MisconfiguredError, variableProblem } from '../core/misconfiguration.ts';
import { isPlaced, type PlaceableNamespace, type Placement, placeNamespace, type PlacementVars, readPlacement } from '../core/placement.ts';

const placements = new WeakMap<object, Placement>();

/** The placement `env`'s variables ask for, read once per environment; a MisconfiguredError if they do not parse. */
export function placementOf(env: object): Placement {
  let placement = placements.get(env);
  if (placement === undefined) {
    try {
      placement = readPlacement(env as PlacementVars);
    } catch (error) {
      throw new MisconfiguredError([variableProblem(error)]);
    }
    placements.set(env, placement);
  }
  return placement;
}

/**
 * `namespace` placed as `env` (the Worker's own environment, unless told) says: how the
 * library's objects are addressed, and how a Worker's own code reaches one of them — a bus shard
 * for `busShardSockets`, say — by the same id. A namespace placed already is answered as it is.
 */
export function placedNamespace<N extends PlaceableNamespace>(namespace: N, env: object = workerEnv): N {
  return isPlaced(namespace) ? namespace : placeNamespace(namespace, placementOf(env));
}
