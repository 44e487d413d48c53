/**
 * A jurisdiction for a local workerd, which has none (`namespace.jurisdiction('eu')` throws
 * "Jurisdiction restrictions are not implemented in workerd."), so that the placement project
 * (test/placement/) can run the library under DO_JURISDICTION end to end.
 *
 * Installed on the runtime's own `DurableObjectNamespace` prototype, which every binding of the
 * isolate shares — the Worker's env, each object's env, `cloudflare:workers`' env — so nothing
 * the library does can pass around it:
 * - `jurisdiction(j)` answers a namespace of that jurisdiction whose ids are the real namespace's
 *   under a name of their own (`j` + NUL + name): an object reached in the jurisdiction and one
 *   reached outside it are two objects, as on the platform; its `get` refuses an id of another
 *   jurisdiction, as the platform's does;
 * - every call on one of the library's bindings is recorded: made in the jurisdiction (with the
 *   hint its `get` was given), or made on the unrestricted namespace — what a test under a
 *   jurisdiction says never happens.
 * Calls on other bindings (the test pool's own) pass untouched.
 */
import { env } from 'cloudflare:workers';

/** A call made through a jurisdiction's namespace. */
export interface PlacedCall {
  readonly binding: string;
  readonly jurisdiction: string;
  readonly method: 'idFromName' | 'get';
  /** The hint a `get` was given (undefined: none; always undefined for `idFromName`). */
  readonly locationHint: string | undefined;
}

/** A call made on the unrestricted namespace. */
export interface UnplacedCall {
  readonly binding: string;
  readonly method: string;
  readonly name?: string;
}

export interface JurisdictionStandIn {
  readonly placed: PlacedCall[];
  readonly unplaced: UnplacedCall[];
  /** Forgets what was recorded (at the start of each test). */
  clear(): void;
  uninstall(): void;
}

type Method = (this: object, ...args: unknown[]) => unknown;
/** The unrestricted namespace's methods that address an object: each call on a library binding is recorded. */
const UNRESTRICTED = ['idFromName', 'idFromString', 'newUniqueId', 'get', 'getByName'] as const;
const REPLACED = [...UNRESTRICTED, 'jurisdiction'] as const;

/** Installs the stand-in, recording the calls on `bindings` (env keys). */
export function installJurisdictionStandIn(bindings: readonly string[]): JurisdictionStandIn {
  const named = env as unknown as Record<string, object>;
  const bindingOf = new Map<object, string>(bindings.map((binding) => [named[binding]!, binding]));
  const prototype = Object.getPrototypeOf(named[bindings[0]!]!) as Record<string, Method>;
  const original = Object.fromEntries(REPLACED.map((method) => [method, prototype[method]!])) as Record<(typeof REPLACED)[number], Method>;
  const placed: PlacedCall[] = [];
  const unplaced: UnplacedCall[] = [];
  /** The jurisdiction each id was derived in. */
  const jurisdictionOf = new WeakMap<object, string>();

  for (const method of UNRESTRICTED) {
    prototype[method] = function (this: object, ...args: unknown[]) {
      const binding = bindingOf.get(this);
      if (binding !== undefined) {
        unplaced.push({ binding, method, ...(method === 'idFromName' && { name: String(args[0]) }) });
      }
      return original[method].apply(this, args);
    };
  }
  prototype.jurisdiction = function (this: object, jurisdiction: unknown) {
    const raw = this;
    const binding = bindingOf.get(raw);
    const j = String(jurisdiction);
    const record = (method: PlacedCall['method'], locationHint: string | undefined) => {
      if (binding !== undefined) placed.push({ binding, jurisdiction: j, method, locationHint });
    };
    return {
      idFromName(name: string) {
        const id = original.idFromName.call(raw, `${j}\u0000${name}`) as object;
        jurisdictionOf.set(id, j);
        record('idFromName', undefined);
        return id;
      },
      get(id: object, options?: { locationHint?: string }) {
        if (jurisdictionOf.get(id) !== j) throw new TypeError(`the id is not of jurisdiction ${j}`);
        record('get', options?.locationHint);
        return original.get.call(raw, id, options);
      },
    };
  };

  return {
    placed,
    unplaced,
    clear() {
      placed.length = 0;
      unplaced.length = 0;
    },
    uninstall() {
      Object.assign(prototype, original);
    },
  };
}
