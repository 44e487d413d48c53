/**
 * What Cloudflare bills a Durable Object for, counted in the benchmark peers (B1; never in src/).
 * https://developers.cloudflare.com/durable-objects/platform/pricing/ (read 2026-12-02): SQLite
 * rows written and rows read; the key-value methods (get, put, delete, list) billed as rows read
 * and written, one per key; each setAlarm() one row written; deletes are writes; requests are
 * HTTP requests, RPC method calls on a stub, incoming WebSocket messages (20 to a request) and
 * alarm invocations.
 *
 * One set of counters per Durable Object class, in module state: locally the Worker and its
 * objects share one isolate, so the Worker serves them at BILLING_PATH (GET: the totals; POST
 * `?enabled=1` or `?enabled=0`: counting on or off). Off by default, so the latency workloads
 * never pay for it:
 * - storage is wrapped (`instrument(ctx, …)` before the base constructor runs, so the base class
 *   only ever sees the wrapped methods) only for objects constructed while counting is on, and
 *   the wrappers pass straight through once it is off again; an object constructed while it was
 *   off is never counted (B1 measures only objects it makes anew);
 * - a request is one branch on the flag (`countRequest`).
 *
 * How each counter is read:
 * - SQL: every `sql.exec`'s cursor, `rowsRead` and `rowsWritten`. A SELECT's rowsRead grows as
 *   its caller iterates the cursor, so cursors are kept and summed when the totals are read
 *   (`settle`), not when `exec` returns (a write's rowsWritten is final by then; reading both
 *   late changes nothing for it). A multi-statement `exec("A; B")` reports only its last
 *   statement's rows in this workerd (1.20261117), so it is run here one statement at a time
 *   (`sql.split` counts them; the runtime allows bindings on the last statement only, which gets
 *   them; what it returns is the last statement's cursor, as before).
 * - key-value (`storage.get/put/delete/list`, the same on a `transaction()`'s txn, and
 *   `storage.kv.*`): one row per key; list, one row per entry returned.
 * - alarms: each setAlarm is a row written (and counted apart, `alarm.set`); deleteAlarm and
 *   getAlarm are counted, not billed (the pricing page bills neither).
 * - deleteAll: counted apart, not as rows. It is not a SQL statement, no cursor sees what it
 *   removes, and its billing per row is not documented.
 * - requests: `fetch`, `alarm` and `webSocketMessage` by the peer's own overrides of them; RPC
 *   method calls on a stub at the caller (`countingNamespace`), where each call is one billed
 *   request; the object cannot tell an RPC call from its own method calls.
 */

export const BILLING_PATH = '/bench/billing';

/** Counting on or off (POST BILLING_PATH?enabled=…). */
let enabled = false;

/** Whether counting is on (a peer's Worker wraps its bindings only then). */
export const counting = (): boolean => enabled;

export type RequestKind = 'fetch' | 'rpc' | 'alarm' | 'webSocketMessage';

interface StatementTotals {
  statements: number;
  rowsRead: number;
  rowsWritten: number;
}

class ClassTotals {
  constructed = 0;
  requests: Record<RequestKind, number> = { fetch: 0, rpc: 0, alarm: 0, webSocketMessage: 0 };
  sql = { statements: 0, rowsRead: 0, rowsWritten: 0, split: 0 };
  kv = { calls: 0, rowsRead: 0, rowsWritten: 0 };
  alarm = { set: 0, deleted: 0, get: 0 };
  deleteAll = 0;
  /** SQL by statement (its first words), and key-value rows by key (up to its first ':'). */
  byStatement: Record<string, StatementTotals> = {};
  byKey: Record<string, { rowsRead: number; rowsWritten: number }> = {};
  /** Cursors not summed yet: their rows are read when the totals are (see settle). */
  pending: { cursor: SqlStorageCursor<Record<string, SqlStorageValue>>; kind: StatementTotals }[] = [];
}

const classes = new Map<string, ClassTotals>();
const totalsOf = (className: string): ClassTotals => {
  let totals = classes.get(className);
  if (totals === undefined) classes.set(className, (totals = new ClassTotals()));
  return totals;
};

/** A cap on cursors held: past it the oldest are summed (their callers are long done with them). */
const MAX_PENDING = 50_000;

function settle(totals: ClassTotals, keep = 0): void {
  const done = totals.pending.splice(0, Math.max(0, totals.pending.length - keep));
  for (const { cursor, kind } of done) {
    totals.sql.rowsRead += cursor.rowsRead;
    totals.sql.rowsWritten += cursor.rowsWritten;
    kind.rowsRead += cursor.rowsRead;
    kind.rowsWritten += cursor.rowsWritten;
  }
}

/** Counts one request to an object of `className` (a peer's fetch/alarm/webSocketMessage override). */
export function countRequest(className: string, kind: RequestKind): void {
  if (enabled) totalsOf(className).requests[kind]++;
}

/**
 * The object's storage, counted while counting is on. Call as `super(instrument(ctx, name), env)`:
 * the base constructor, and everything it hands the storage to, sees the wrapped methods.
 */
export function instrument(ctx: DurableObjectState, className: string): DurableObjectState {
  if (!enabled) return ctx;
  const totals = totalsOf(className);
  totals.constructed++;
  wrap(ctx, totals);
  return ctx;
}

/**
 * For an object that outlives the workloads that count it (an event type's log: one object per
 * type for the whole run, constructed at its first use, long before a workload turns counting
 * on): call at each request; at the first one with counting on, wraps its storage as `instrument`
 * does (once; not counted as constructed). The object must reach its storage through `ctx.storage`
 * or objects taken from it (`ctx.storage.sql`): the wrappers replace their methods in place.
 */
export function instrumentLate(ctx: DurableObjectState, className: string): void {
  if (enabled && !wrapped.has(ctx)) wrap(ctx, totalsOf(className));
}

/** The states whose storage is wrapped. */
const wrapped = new WeakSet<DurableObjectState>();

function wrap(ctx: DurableObjectState, totals: ClassTotals): void {
  wrapped.add(ctx);
  const storage = ctx.storage;
  wrapSql(storage.sql, totals);
  wrapKv(storage, totals);
  wrapSyncKv(storage.kv, totals);
  const { setAlarm, deleteAlarm, getAlarm, deleteAll, transaction } = bound(
    storage,
    'setAlarm',
    'deleteAlarm',
    'getAlarm',
    'deleteAll',
    'transaction',
  );
  storage.setAlarm = (...args) => {
    if (enabled) totals.alarm.set++;
    return setAlarm(...args);
  };
  storage.deleteAlarm = (...args) => {
    if (enabled) totals.alarm.deleted++;
    return deleteAlarm(...args);
  };
  storage.getAlarm = (...args) => {
    if (enabled) totals.alarm.get++;
    return getAlarm(...args);
  };
  storage.deleteAll = (...args) => {
    if (enabled) totals.deleteAll++;
    return deleteAll(...args);
  };
  storage.transaction = (closure) =>
    transaction((txn) => {
      wrapKv(txn, totals);
      return closure(txn);
    });
}

/** `target`'s methods, bound to it (the natives need their own `this`). */
function bound<T extends object, K extends keyof T>(target: T, ...names: K[]): Pick<T, K> {
  const out = {} as Pick<T, K>;
  for (const name of names) out[name] = (target[name] as (...args: unknown[]) => unknown).bind(target) as T[K];
  return out;
}

const keyOf = (query: string) => query.trim().split(/\s+/, 5).join(' ');

function wrapSql(sql: SqlStorage, totals: ClassTotals): void {
  const exec = sql.exec.bind(sql);
  const counted = (query: string, bindings: unknown[]) => {
    const cursor = exec(query, ...bindings);
    totals.sql.statements++;
    const key = keyOf(query);
    const kind = (totals.byStatement[key] ??= { statements: 0, rowsRead: 0, rowsWritten: 0 });
    kind.statements++;
    totals.pending.push({ cursor, kind });
    if (totals.pending.length > MAX_PENDING) settle(totals, MAX_PENDING / 2);
    return cursor;
  };
  sql.exec = ((query: string, ...bindings: unknown[]) => {
    if (!enabled) return exec(query, ...bindings);
    const statements = query.includes(';') ? splitStatements(query) : [query];
    if (statements.length <= 1) return counted(query, bindings);
    totals.sql.split++;
    // The runtime runs every statement but the last to its end, and takes bindings for the last
    // one only ("only the last statement can have parameters"): the same, one exec each.
    for (const statement of statements.slice(0, -1)) for (const _ of counted(statement, [])) void _;
    return counted(statements.at(-1)!, bindings);
  }) as SqlStorage['exec'];
}

/** The async key-value methods of the storage, or of a transaction's txn. */
function wrapKv(target: DurableObjectStorage | DurableObjectTransaction, totals: ClassTotals): void {
  const { get, put, list } = bound(target as DurableObjectStorage, 'get', 'put', 'list');
  const remove = (target as DurableObjectStorage).delete.bind(target);
  const rows = (keys: string | string[] | Record<string, unknown>, side: 'rowsRead' | 'rowsWritten') => {
    const names = typeof keys === 'string' ? [keys] : Array.isArray(keys) ? keys : Object.keys(keys);
    countKeys(totals, names, side);
  };
  Object.assign(target, {
    get: (keys: string | string[], options?: DurableObjectGetOptions) => {
      if (enabled) rows(keys, 'rowsRead');
      return get(keys as string, options);
    },
    put: (keys: string | Record<string, unknown>, ...rest: unknown[]) => {
      if (enabled) rows(keys, 'rowsWritten');
      return (put as (...args: unknown[]) => Promise<void>)(keys, ...rest);
    },
    delete: (keys: string | string[], options?: DurableObjectPutOptions) => {
      if (enabled) rows(keys, 'rowsWritten');
      return remove(keys as string, options);
    },
    list: async (options?: DurableObjectListOptions) => {
      const entries = await list(options);
      if (enabled) countKeys(totals, [...entries.keys()], 'rowsRead');
      return entries;
    },
  });
}

function wrapSyncKv(kv: SyncKvStorage, totals: ClassTotals): void {
  const { get, put, list } = bound(kv, 'get', 'put', 'list');
  const remove = kv.delete.bind(kv);
  Object.assign(kv, {
    get: (key: string) => {
      if (enabled) countKeys(totals, [key], 'rowsRead');
      return get(key);
    },
    put: (key: string, value: unknown) => {
      if (enabled) countKeys(totals, [key], 'rowsWritten');
      return put(key, value);
    },
    delete: (key: string) => {
      if (enabled) countKeys(totals, [key], 'rowsWritten');
      return remove(key);
    },
    // Lazy, as the runtime's: a row counts when the caller takes it.
    list: function* (options?: SyncKvListOptions) {
      if (enabled) countKeys(totals, [], 'rowsRead');
      for (const entry of list(options)) {
        if (enabled) countKeys(totals, [entry[0]], 'rowsRead', false);
        yield entry;
      }
    },
  });
}

function countKeys(totals: ClassTotals, keys: string[], side: 'rowsRead' | 'rowsWritten', call = true): void {
  if (call) totals.kv.calls++;
  totals.kv[side] += keys.length;
  for (const key of keys) {
    const colon = key.indexOf(':');
    const group = (totals.byKey[colon > 0 ? key.slice(0, colon + 1) : key.slice(0, 40)] ??= { rowsRead: 0, rowsWritten: 0 });
    group[side]++;
  }
}

/**
 * The statements of a SQL text, split at the semicolons outside quotes, identifiers and comments;
 * one element for a single statement. A trigger (its body has semicolons of its own) is not split.
 */
export function splitStatements(text: string): string[] {
  if (/\bcreate\s+(temp\s+|temporary\s+)?trigger\b/i.test(text)) return [text];
  const statements: string[] = [];
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    const close = c === "'" ? "'" : c === '"' ? '"' : c === '`' ? '`' : c === '[' ? ']' : undefined;
    if (close !== undefined) {
      i = text.indexOf(close, i + 1);
      if (i === -1) break;
    } else if (c === '-' && text[i + 1] === '-') {
      i = text.indexOf('\n', i);
      if (i === -1) break;
    } else if (c === '/' && text[i + 1] === '*') {
      i = text.indexOf('*/', i + 2);
      if (i === -1) break;
      i++;
    } else if (c === ';') {
      statements.push(text.slice(start, i));
      start = i + 1;
    }
  }
  statements.push(text.slice(start));
  return statements.filter((s) => s.replace(/--[^\n]*|\/\*[\s\S]*?\*\//g, '').trim() !== '');
}

/**
 * A namespace whose stubs count each RPC method call (a billed request of its own) for
 * `className`; `fetch` is counted by the object. Only while counting is on: otherwise the
 * namespace itself.
 */
export function countingNamespace<T extends DurableObjectNamespace<any>>(namespace: T, className: string): T {
  if (!enabled) return namespace;
  const stub = (target: DurableObjectStub) =>
    new Proxy(target, {
      get(object, name) {
        const value = (object as unknown as Record<string | symbol, unknown>)[name];
        if (typeof value !== 'function') return value;
        // Called on the stub itself (a native method called on the proxy is an illegal
        // invocation), by Reflect.apply (an RPC method is a stub too: `.apply` would be a call).
        if (typeof name !== 'string' || NOT_RPC.has(name)) return (...args: unknown[]) => Reflect.apply(value, object, args);
        return (...args: unknown[]) => {
          countRequest(className, 'rpc');
          return Reflect.apply(value, object, args);
        };
      },
    });
  return new Proxy(namespace, {
    get(object, name) {
      const value = (object as unknown as Record<string | symbol, unknown>)[name];
      if (typeof value !== 'function') return value;
      if (name === 'get' || name === 'getByName')
        return (...args: unknown[]) => stub(Reflect.apply(value, object, args) as DurableObjectStub);
      if (name === 'jurisdiction') return (...args: unknown[]) => countingNamespace(Reflect.apply(value, object, args) as T, className);
      return (...args: unknown[]) => Reflect.apply(value, object, args);
    },
  });
}

/** A stub's own methods, not RPC calls to the object (fetch is counted by the object itself). */
const NOT_RPC = new Set(['fetch', 'connect', 'then', 'dup', 'constructor']);

/** What GET BILLING_PATH answers: per class, the counts and what they bill. */
function report(): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, totals] of classes) {
    settle(totals);
    const { pending: _, ...counts } = totals;
    const { fetch, rpc, alarm, webSocketMessage } = totals.requests;
    out[name] = {
      ...counts,
      billed: {
        rowsRead: totals.sql.rowsRead + totals.kv.rowsRead,
        rowsWritten: totals.sql.rowsWritten + totals.kv.rowsWritten + totals.alarm.set,
        requests: fetch + rpc + alarm + webSocketMessage / 20,
      },
    };
  }
  return out;
}

/** The bench endpoint, or undefined for any other request. */
export function serveBilling(request: Request): Response | undefined {
  if (!request.url.includes(BILLING_PATH) || new URL(request.url).pathname !== BILLING_PATH) return undefined;
  if (request.method === 'POST') {
    const flag = new URL(request.url).searchParams.get('enabled');
    if (flag !== '1' && flag !== '0') return Response.json({ error: 'POST ?enabled=1 or ?enabled=0' }, { status: 400 });
    enabled = flag === '1';
  }
  return Response.json({ enabled, classes: report() });
}
