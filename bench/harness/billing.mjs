// What a Durable Object operation costs at Cloudflare's published prices (B1): the peers'
// counters (bench/peers/shared/billing.ts, GET /bench/billing) before and after an operation,
// their difference summed over the peer's object classes, per operation, and priced. Pure
// functions, no I/O (tested in billing.test.mjs).

/**
 * USD per million, beyond what the Workers Paid plan includes each month (50M rows written,
 * 25B rows read, 1M requests). https://developers.cloudflare.com/durable-objects/platform/pricing/,
 * read 2026-12-02. Storage ($0.20/GB-month) is not priced per operation here; Workers requests
 * (a separate product) are left out.
 */
export const PRICES_USD_PER_MILLION = { rowsWritten: 1.0, rowsRead: 0.001, requests: 0.15 };

/** What one million operations cost beyond the included amounts, in USD, from the billed counts of one. */
export const usdPerMillion = ({ rowsWritten, rowsRead, requests }) =>
  rowsWritten * PRICES_USD_PER_MILLION.rowsWritten +
  rowsRead * PRICES_USD_PER_MILLION.rowsRead +
  requests * PRICES_USD_PER_MILLION.requests;

const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * after − before, leaf by leaf, for every number in `after` (a key missing from `before`
 * counts from 0: a class or statement first seen in between). Keys of `before` alone are dropped.
 */
export function difference(before, after) {
  if (typeof after === 'number') return after - (typeof before === 'number' ? before : 0);
  if (!isObject(after)) return undefined;
  const out = {};
  for (const [key, value] of Object.entries(after)) {
    const d = difference(isObject(before) ? before[key] : undefined, value);
    if (d !== undefined) out[key] = d;
  }
  return out;
}

/** Leaf-by-leaf sum of several objects of the same shape (the classes of one peer). */
export function sum(objects) {
  const out = {};
  for (const object of objects) {
    for (const [key, value] of Object.entries(object)) {
      if (typeof value === 'number') out[key] = (out[key] ?? 0) + value;
      else if (isObject(value)) out[key] = sum([out[key] ?? {}, value]);
    }
  }
  return out;
}

/** Leaf by leaf ÷ count. */
export function divide(value, count) {
  if (typeof value === 'number') return value / count;
  const out = {};
  for (const [key, v] of Object.entries(value)) out[key] = divide(v, count);
  return out;
}

const nonZero = (table) => Object.fromEntries(Object.entries(table ?? {}).filter(([, v]) => Object.values(v).some((n) => n !== 0)));

/**
 * One operation's counts from the classes' totals before and after `count` of them: what it
 * bills (rows written, rows read, requests), priced; the counters behind it; per class; and the
 * statements and keys that wrote or read. `before`/`after` are GET /bench/billing's `classes`.
 */
export function perOperation(before, after, count) {
  const byClass = difference(before ?? {}, after ?? {});
  const total = divide(sum(Object.values(byClass)), count);
  const billed = { rowsWritten: 0, rowsRead: 0, requests: 0, ...total.billed };
  return {
    count,
    billed,
    usd_per_million: usdPerMillion(billed),
    alarms_set: total.alarm?.set ?? 0,
    alarm_runs: total.requests?.alarm ?? 0,
    delete_all: total.deleteAll ?? 0,
    alarms_deleted: total.alarm?.deleted ?? 0,
    requests: total.requests ?? {},
    sql: total.sql ?? {},
    kv: total.kv ?? {},
    constructed: total.constructed ?? 0,
    by_class: Object.fromEntries(Object.entries(byClass).map(([name, counts]) => [name, divide(counts.billed ?? {}, count)])),
    by_statement: nonZero(total.byStatement),
    by_key: nonZero(total.byKey),
  };
}

/**
 * What one unit of a part of an operation costs: (`op` − `base`) ÷ `units`, leaf by leaf, for
 * two perOperation results (B1's progress event: a call with n events less a call with none,
 * ÷ n). `count` becomes the units measured.
 */
export function perUnit(op, base, units) {
  const out = divide(difference(base, op), units);
  out.count = op.count * units;
  out.by_statement = nonZero(out.by_statement);
  out.by_key = nonZero(out.by_key);
  return out;
}
