/**
 * Whether each Durable Object class can use SQLite is known only where an object of it first
 * touches its storage: workerd refuses `ctx.storage.sql` (and `ctx.storage.kv`) to a class
 * declared with `storage = "legacy-kv"`, or not declared at all, and the refusal comes back to
 * the Worker as the rejection of its call to the object. The Worker probes nothing for it (a
 * request to an object, and its cold start, on every isolate's first request; one named object
 * probed by every isolate would be a hot spot): it calls each object through these guards,
 * which turn that refusal into the configuration error that names the fix — logged once per
 * isolate per binding — and from then on answer every call to that binding with it at once,
 * waking no object. Where the refusal surfaces:
 * - the session object: its first request (the object lets workerd's error through, session-object.ts);
 * - the task object: its constructor, on the task's creation (so a tool called as a task is
 *   answered with the configuration error, edge-tasks.ts, not an `isError` result);
 * - the principal registry: its first admission (an `initialize`, a task);
 * - the event bus: its first revocation mark read (a listen of an authenticated principal) or
 *   written; a bus without SQLite serves AUTH=none's listens, which never touch its storage.
 */
import { log } from '../core/log.ts';
import { isSqlUnavailable, MisconfiguredError, sqlProblem } from '../core/misconfiguration.ts';
import { settled } from '../core/placement.ts';
import type { Holding, HoldingKind } from '../core/holdings.ts';
import type {
  AdmissionAnswer,
  AdmissionRequest,
  PrincipalRegistryNamespace,
  PrincipalRegistryStub,
} from '../principals/principal-registry.ts';
import type { WebhookAdmissionAnswer, WebhookAdmissionRequest } from '../principals/webhook-holdings.ts';

/** A namespace whose objects are fetched (sessions, tasks, the bus). */
export interface FetchNamespace {
  idFromName(name: string): DurableObjectId;
  get(id: DurableObjectId): { fetch(request: Request): Promise<Response> };
}

const namespaceGuards = new WeakMap<object, StorageGuard>();

/**
 * One guard per namespace per isolate, for callers with no edge state at hand (an emit from a tool
 * or an alarm, a log poking its subscribers): a class without SQLite is refused at once after its
 * first refusal, and another namespace is not. Its refusal names `binding`, the usual name.
 */
export function namespaceGuard(namespace: object, binding: string, role: string): StorageGuard {
  let guard = namespaceGuards.get(namespace);
  if (guard === undefined) {
    guard = new StorageGuard(binding, role);
    namespaceGuards.set(namespace, guard);
  }
  return guard;
}

/** One binding's guard: what it has found, for every call the Worker makes to its objects. */
export class StorageGuard {
  #refusal: MisconfiguredError | undefined;

  constructor(
    /** The binding's name, as the Worker's accessor reads it. */
    readonly binding: string,
    /** What its class is, to the reader of the fix. */
    readonly role: string,
  ) {}

  /** Runs a call to one of the binding's objects: refused at once once the class is known to have no SQLite. */
  async call<T>(work: () => Promise<T>): Promise<T> {
    if (this.#refusal !== undefined) throw this.#refusal;
    try {
      return await work();
    } catch (error) {
      if (!isSqlUnavailable(error)) throw error;
      if (this.#refusal === undefined) {
        this.#refusal = new MisconfiguredError([sqlProblem(this.binding, this.role)]);
        log({ msg: 'mcp.config.error', subject: this.binding, error: this.#refusal.problems[0]!.detail });
      }
      throw this.#refusal;
    }
  }

  /** `namespace` (placed as its environment says: edge-state.ts), its objects' `fetch` calls guarded. */
  namespace<N extends FetchNamespace>(namespace: N): FetchNamespace {
    return settled({
      idFromName: (name) => namespace.idFromName(name),
      get: (id) => new GuardedStub(this, namespace.get(id)),
    });
  }

  /** The principal registry's namespace (placed as its environment says), its objects' methods guarded. */
  registry(namespace: PrincipalRegistryNamespace): PrincipalRegistryNamespace {
    return settled({
      idFromName: (name) => namespace.idFromName(name),
      get: (id): PrincipalRegistryStub => {
        const stub = namespace.get(id) as PrincipalRegistryStub;
        return {
          admit: (request: AdmissionRequest) => this.call<AdmissionAnswer>(() => Promise.resolve(stub.admit(request))),
          admitWebhook: (request: WebhookAdmissionRequest) =>
            this.call<WebhookAdmissionAnswer>(() => Promise.resolve(stub.admitWebhook(request))),
          forget: (kind: HoldingKind, ids: readonly string[]) => this.call(() => Promise.resolve(stub.forget(kind, ids))),
          list: () => this.call<Holding[]>(() => Promise.resolve(stub.list())),
          fence: (grant: string) => this.call(() => Promise.resolve(stub.fence(grant))),
          recall: (at: number) => this.call(() => Promise.resolve(stub.recall(at))),
        };
      },
    });
  }
}

/** One object of a guarded namespace (a request's, so a class: no function made per request). */
class GuardedStub {
  readonly #guard: StorageGuard;
  readonly #stub: { fetch(request: Request): Promise<Response> };

  constructor(guard: StorageGuard, stub: { fetch(request: Request): Promise<Response> }) {
    this.#guard = guard;
    this.#stub = stub;
  }

  fetch(request: Request): Promise<Response> {
    return this.#guard.call(() => this.#stub.fetch(request));
  }
}
