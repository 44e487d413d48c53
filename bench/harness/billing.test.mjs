// node --test bench/harness/*.test.mjs  — B1's arithmetic: counters before and after, per operation, priced.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { difference, perOperation, perUnit, sum, usdPerMillion } from './billing.mjs';

/** One class's totals as GET /bench/billing answers them (bench/peers/shared/billing.ts). */
const totals = ({ written = 0, read = 0, fetch = 0, rpc = 0, alarm = 0, ws = 0, set = 0, deleteAll = 0, byStatement = {} } = {}) => ({
  constructed: 0,
  requests: { fetch, rpc, alarm, webSocketMessage: ws },
  sql: { statements: 0, rowsRead: read, rowsWritten: written, split: 0 },
  kv: { calls: 0, rowsRead: 0, rowsWritten: 0 },
  alarm: { set, deleted: 0, get: 0 },
  deleteAll,
  byStatement,
  byKey: {},
  billed: { rowsRead: read, rowsWritten: written + set, requests: fetch + rpc + alarm + ws / 20 },
});

test('usdPerMillion: $1.00 a million rows written, $0.001 read, $0.15 requests', () => {
  assert.equal(usdPerMillion({ rowsWritten: 1, rowsRead: 0, requests: 0 }), 1);
  assert.equal(usdPerMillion({ rowsWritten: 0, rowsRead: 1000, requests: 0 }), 1);
  assert.ok(Math.abs(usdPerMillion({ rowsWritten: 3, rowsRead: 2, requests: 1 }) - 3.152) < 1e-12);
});

test('difference: leaf by leaf; what is new in after counts from 0; what only before has is dropped', () => {
  assert.deepEqual(difference({ a: 1, b: { c: 2 }, gone: 5 }, { a: 4, b: { c: 2, d: 3 }, e: { f: 1 } }), {
    a: 3,
    b: { c: 0, d: 3 },
    e: { f: 1 },
  });
  assert.deepEqual(difference(undefined, { a: 2 }), { a: 2 });
});

test('sum: classes of one peer add up leaf by leaf', () => {
  assert.deepEqual(sum([{ a: 1, b: { c: 2 } }, { a: 2, b: { d: 1 } }, {}]), { a: 3, b: { c: 2, d: 1 } });
});

test('perOperation: summed over classes, ÷ count, priced; a class first seen in the window counts whole', () => {
  const before = { S: totals({ written: 10, read: 4, fetch: 3 }) };
  const after = {
    S: totals({
      written: 16,
      read: 8,
      fetch: 5,
      ws: 40,
      set: 2,
      byStatement: { 'INSERT INTO events': { statements: 2, rowsRead: 0, rowsWritten: 6 } },
    }),
    T: totals({ written: 4, rpc: 2, alarm: 2, deleteAll: 2 }),
  };
  const op = perOperation(before, after, 2);
  assert.deepEqual(op.billed, { rowsWritten: (6 + 2 + 4) / 2, rowsRead: 2, requests: (2 + 2 + 2 + 2) / 2 });
  assert.ok(Math.abs(op.usd_per_million - (6 + 0.002 + 4 * 0.15)) < 1e-12);
  assert.equal(op.alarms_set, 1);
  assert.equal(op.alarm_runs, 1);
  assert.equal(op.delete_all, 1);
  assert.deepEqual(op.requests, { fetch: 1, rpc: 1, alarm: 1, webSocketMessage: 20 });
  assert.deepEqual(op.by_class, { S: { rowsRead: 2, rowsWritten: 4, requests: 2 }, T: { rowsRead: 0, rowsWritten: 2, requests: 2 } });
  assert.deepEqual(op.by_statement, { 'INSERT INTO events': { statements: 1, rowsRead: 0, rowsWritten: 3 } });
  assert.equal(op.count, 2);
});

test('perOperation without counters before or after: zeros, not NaN', () => {
  const op = perOperation(undefined, undefined, 3);
  assert.deepEqual(op.billed, { rowsWritten: 0, rowsRead: 0, requests: 0 });
  assert.equal(op.usd_per_million, 0);
});

test('perUnit: the events of a call less a call of none, ÷ events', () => {
  const none = perOperation({ S: totals() }, { S: totals({ written: 6, fetch: 2 }) }, 2);
  const hundred = perOperation({ S: totals() }, { S: totals({ written: 206, fetch: 2 }) }, 2);
  const event = perUnit(hundred, none, 100);
  assert.deepEqual(event.billed, { rowsWritten: 1, rowsRead: 0, requests: 0 });
  assert.equal(event.usd_per_million, 1);
  assert.equal(event.count, 200);
});
