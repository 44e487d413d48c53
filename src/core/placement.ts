/**
 * Where the library's Durable Objects live: every object it creates — sessions, tasks, bus
 * shards, principal registries, event logs, webhook subscriptions — is addressed through one
 * placement, read from two variables:
 * - DO_JURISDICTION: the jurisdiction each object is restricted to (`namespace.jurisdiction(j)`
 *   before `idFromName`). Cloudflare: a jurisdiction makes objects "only run and store data within
 *   a region"; "Workers may still access Durable Objects constrained to a jurisdiction from
 *   anywhere in the world" (developers.cloudflare.com/durable-objects/reference/data-location/).
 *   A jurisdiction is part of an object's id, so the same name in another jurisdiction (or in
 *   none) is another object: changing it orphans every object a deployment has.
 * - DO_LOCATION_HINT: where an object is created (`get(id, { locationHint })`), best effort, and
 *   only at its first `get()`: an object never moves afterwards.
 * Both unset (or empty): the platform's default, an object created near its first caller, and
 * namespaces used exactly as given (no wrapper, no cost).
 *
 * This file is pure: the two variables' parse (a value not in the runtime's list is a
 * configuration error naming the variable and every allowed value, never passed on), and the
 * wrapper that applies a placement to a namespace. Which environment a placement is read from —
 * the Worker's, an object's, the isolate's for a namespace a user hands over bare — is
 * edge/placement.ts's; that the runtime accepts the jurisdiction is checked with the rest of the
 * configuration (edge/edge-state.ts).
 */
import { MisconfiguredError, type ConfigProblem } from './misconfiguration.ts';

/** The jurisdictions the runtime knows (`DurableObjectJurisdiction`, @cloudflare/workers-types 5.20261117; `us` since 2026-06-26). */
export const JURISDICTIONS = ['eu', 'fedramp', 'fedramp-high', 'us'] as const;
export type Jurisdiction = (typeof JURISDICTIONS)[number];

/** The location hints the runtime knows (`DurableObjectLocationHint`, the same types). */
export const LOCATION_HINTS = ['wnam', 'enam', 'sam', 'weur', 'eeur', 'apac', 'apac-ne', 'apac-se', 'oc', 'afr', 'me'] as const;
export type LocationHint = (typeof LOCATION_HINTS)[number];

export interface Placement {
  readonly jurisdiction?: Jurisdiction;
  readonly locationHint?: LocationHint;
}

export interface PlacementVars {
  readonly DO_JURISDICTION?: string;
  readonly DO_LOCATION_HINT?: string;
}

/** The platform's default: no jurisdiction, no hint. */
export const UNPLACED: Placement = Object.freeze({});

/**
 * The placement `vars` ask for. Unset or blank is none; a value is spelled as Cloudflare spells
 * it (lower case: `EU` is refused, not read as `eu`), since a jurisdiction decides where data may
 * rest and a guess at what was meant is not a decision. Throws `configuration: …` errors.
 */
export function readPlacement(vars: PlacementVars): Placement {
  const jurisdiction = oneOfOrNone(
    'DO_JURISDICTION',
    vars.DO_JURISDICTION,
    JURISDICTIONS,
    'the jurisdiction every Durable Object is restricted to',
  );
  const locationHint = oneOfOrNone('DO_LOCATION_HINT', vars.DO_LOCATION_HINT, LOCATION_HINTS, 'where a new Durable Object is created');
  if (jurisdiction === undefined && locationHint === undefined) return UNPLACED;
  return Object.freeze({
    ...(jurisdiction !== undefined && { jurisdiction }),
    ...(locationHint !== undefined && { locationHint }),
  });
}

function oneOfOrNone<const T extends string>(name: string, text: unknown, allowed: readonly T[], what: string): T | undefined {
  if (text === undefined) return undefined;
  const value = typeof text === 'string' ? text.trim() : text;
  if (value === '') return undefined;
  if ((allowed as readonly unknown[]).includes(value)) return value as T;
  throw new Error(`configuration: ${name} (${what}) must be one of ${allowed.join(', ')}, or unset for none; got ${JSON.stringify(text)}`);
}

/** A namespace as the library addresses objects (a `DurableObjectNamespace` is one): any id and stub types. */
export interface PlaceableNamespace {
  idFromName(name: string): unknown;
  get(id: never, options?: { readonly locationHint?: string }): unknown;
}

/** The same, as this file calls it. */
interface Addressing {
  idFromName(name: string): unknown;
  get(id: unknown, options?: { readonly locationHint?: string }): unknown;
  jurisdiction?(jurisdiction: Jurisdiction): Addressing;
}

/** The namespaces this file made, each of which is placed already. */
const placedNamespaces = new WeakSet<object>();
/** Each namespace's placed wrapper per placement, so that one binding is one object (storage guards are kept per namespace). */
const wrappers = new WeakMap<object, Map<string, object>>();

/** Whether `namespace` is one placeNamespace made, or a wrapper of one ({@link settled}): placing it again would restrict it twice. */
export function isPlaced(namespace: object): boolean {
  return placedNamespaces.has(namespace);
}

/**
 * `wrapper`, a namespace the library made over one whose placement its environment has decided
 * (placed, or left as it is by a configuration of none): never placed again, by another
 * environment's placement either.
 */
export function settled<T extends object>(wrapper: T): T {
  placedNamespaces.add(wrapper);
  return wrapper;
}

/**
 * `namespace` with `placement` applied to every object it addresses: its ids are the
 * jurisdiction's (`namespace.jurisdiction(j).idFromName(name)`), and its stubs are got with the
 * location hint. Only `idFromName` and `get` are kept, the two the library calls. No placement:
 * `namespace` itself. A namespace placed already is answered as it is. The runtime refusing the
 * jurisdiction (a local workerd has none) is the configuration error that says so.
 */
export function placeNamespace<N extends PlaceableNamespace>(namespace: N, placement: Placement, binding?: string): N {
  const { jurisdiction, locationHint } = placement;
  if ((jurisdiction === undefined && locationHint === undefined) || placedNamespaces.has(namespace)) return namespace;
  const key = `${jurisdiction ?? ''}/${locationHint ?? ''}`;
  let byPlacement = wrappers.get(namespace);
  const known = byPlacement?.get(key);
  if (known !== undefined) return known as N;
  const addressing = namespace as unknown as Addressing;
  const restricted = jurisdiction === undefined ? addressing : restrict(addressing, jurisdiction, binding);
  const options = locationHint === undefined ? undefined : Object.freeze({ locationHint });
  const placed: Addressing = {
    idFromName: (name) => restricted.idFromName(name),
    get: options === undefined ? (id) => restricted.get(id) : (id) => restricted.get(id, options),
  };
  placedNamespaces.add(placed);
  if (byPlacement === undefined) {
    byPlacement = new Map();
    wrappers.set(namespace, byPlacement);
  }
  byPlacement.set(key, placed);
  return placed as unknown as N;
}

/** `namespace.jurisdiction(j)`, or the MisconfiguredError that says why there is none. */
function restrict(namespace: Addressing, jurisdiction: Jurisdiction, binding?: string): Addressing {
  if (typeof namespace.jurisdiction !== 'function') throw new MisconfiguredError([notRestrictable(binding)]);
  try {
    return namespace.jurisdiction(jurisdiction);
  } catch (error) {
    throw new MisconfiguredError([jurisdictionRefused(jurisdiction, error, binding)]);
  }
}

/**
 * A jurisdiction the runtime refuses, and the fix: a local workerd (wrangler dev, vitest) has
 * none, and says so ("Jurisdiction restrictions are not implemented in workerd."); the platform
 * refusing one is the jurisdiction to change.
 */
export function jurisdictionRefused(jurisdiction: Jurisdiction, error: unknown, binding = 'a Durable Object namespace'): ConfigProblem {
  const said = error instanceof Error ? error.message : String(error);
  const fix = said.includes('not implemented in workerd')
    ? 'A local workerd (wrangler dev, vitest) has no jurisdictions: leave DO_JURISDICTION empty there (a line `DO_JURISDICTION=` in .dev.vars, ' +
      'or a test project whose vars leave it out) and set it only where the Worker is deployed'
    : `Set DO_JURISDICTION to a jurisdiction this account may use (${JURISDICTIONS.join(', ')}), or unset it`;
  return {
    subject: 'DO_JURISDICTION',
    detail: `DO_JURISDICTION is ${JSON.stringify(jurisdiction)}, and the runtime refused it for ${binding} (${JSON.stringify(said)}). ${fix}`,
  };
}

function notRestrictable(binding = 'a Durable Object namespace'): ConfigProblem {
  return {
    subject: binding,
    detail:
      `DO_JURISDICTION is set, and ${binding} has no jurisdiction(): give createMcpWorker the binding itself ` +
      '(`(env) => env.MCP_SESSION`), not a wrapper of it',
  };
}
