// The cost model's arithmetic, checked against figures worked out by hand.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { dailyUsage, formatBillTable, monthlyBill, PRICES, perOperationFrom } from './scale-model.mjs';

const ops = {
  session: { written: 12, read: 4, requests: 2 },
  call: { written: 3, read: 3, requests: 1 },
  progressEvent: { written: 1, read: 0, requests: 0 },
  task: { written: 5, read: 1, requests: 1 },
  taskGet: { written: 0, read: 1, requests: 1 },
  expiry: { written: 1, read: 2, requests: 2 },
  purge: { written: 0, read: 0, requests: 1 },
  heldStream: { written: 2, read: 1, requests: 1 },
  workerCpuMsPerRequest: 2,
  objectSecondsPerRequest: 0.002,
  cpuMsPerHeldStreamHour: 2.4,
  storedBytesPerSession: 50_000,
};
const profile = { calls: 20, progressEvents: 100, tasks: 2, taskGets: 3, heldIdleHours: 8 };

test('a daily user: every operation counted as often as the profile says', () => {
  const day = dailyUsage(profile, ops);
  // 12 + 20×3 + 100×1 + 2×5 + 6×0 + 1 + 2×0 + 2 = 185
  assert.equal(day.rowsWritten, 185);
  // and what deleteAll() would remove: 3 + 20×3 + 100×1 + 2×1 + 1 = 166 more
  assert.equal(day.rowsWrittenIfDeleteAllBilled, 185 + 166);
  // 2 + 20 + 0 + 2 + 6 + 2 + 2 + 1 = 35
  assert.equal(day.objectRequests, 35);
  // initialize, initialized, 20 calls, 2 × (create + 3 gets), the GET stream
  assert.equal(day.workerRequests, 31);
  assert.equal(day.workerCpuMs, 31 * 2 + 8 * 2.4);
  assert.ok(Math.abs(day.objectGbSeconds - 35 * 0.002 * 0.128) < 1e-12);
  assert.ok(Math.abs(day.storageGb - (50_000 / 1e9) * (9 / 24)) < 1e-15);
});

test('no held hours: no GET stream, no heartbeats', () => {
  const day = dailyUsage({ ...profile, heldIdleHours: 0 }, ops);
  assert.equal(day.workerRequests, 30);
  assert.equal(day.rowsWritten, 183);
  assert.equal(day.workerCpuMs, 60);
});

test('a small deployment stays inside what the plan includes: $5', () => {
  const bill = monthlyBill(profile, 500, ops);
  assert.equal(bill.month.rowsWritten, 185 * 500 * 30);
  assert.equal(bill.total, 5);
  // 1,000 users make 1.05 M object requests: 50 k past the included million, $0.15 a million.
  assert.ok(Math.abs(monthlyBill(profile, 1_000, ops).lines.objectRequests - 0.0075) < 1e-12);
});

test('past the included amounts, each line is its overage at its price', () => {
  const bill = monthlyBill(profile, 1_000_000, ops);
  const rowsWritten = 185e6 * 30;
  assert.ok(Math.abs(bill.lines.rowsWritten - ((rowsWritten - PRICES.rowsWritten.included) / 1e6) * 1.0) < 1e-6);
  const workerRequests = 31e6 * 30;
  assert.ok(Math.abs(bill.lines.workerRequests - ((workerRequests - 10e6) / 1e6) * 0.3) < 1e-6);
  const { rowsWrittenIfDeleteAllBilled, ...counted } = bill.lines;
  const sum = Object.values(counted).reduce((a, b) => a + b, 0);
  assert.equal(bill.total, sum);
  assert.ok(Math.abs(bill.totalIfDeleteAllBilled - (sum - bill.lines.rowsWritten + rowsWrittenIfDeleteAllBilled)) < 1e-6);
  assert.ok(Math.abs(rowsWrittenIfDeleteAllBilled - ((351e6 * 30 - 50e6) / 1e6) * 1.0) < 1e-6);
});

test('figures come from the summary and the scaled run, and a missing one is an error naming it', () => {
  const medians = {};
  for (const name of ['session', 'echo', 'event', 'task', 'task_get', 'expiry', 'purge']) {
    for (const kind of ['written', 'read', 'requests']) medians[`B1.${name}_${kind}`] = { ours: 1 };
  }
  medians['W1.cpu_ms_per_call'] = { ours: 3 };
  medians['W1.p50_ms'] = { ours: 2 };
  const scaleRun = {
    date: 'd',
    derived: {
      rows_written_per_session: { hold: 2 },
      rows_read_per_session: { hold: 29 },
      do_requests_per_session: { hold: 2.05 },
      database_bytes_per_session: { idle: 24_717 },
      cpu_ms_per_held_stream_hour: 72,
    },
  };
  const op = perOperationFrom({ medians, date: 'x', mode: 'full', rounds: 5 }, scaleRun);
  assert.equal(op.objectSecondsPerRequest, 0.002);
  assert.equal(op.heldStream.written, 2);
  assert.equal(op.heldStream.requests, 2.05);
  assert.equal(op.cpuMsPerHeldStreamHour, 72);
  assert.throws(() => perOperationFrom({ medians }, { derived: {} }), /rows written per GET stream/);
  delete medians['W1.cpu_ms_per_call'];
  assert.throws(() => perOperationFrom({ medians }, scaleRun), /W1\.cpu_ms_per_call/);
  assert.throws(() => perOperationFrom({ medians: { ...medians, 'W1.cpu_ms_per_call': { ours: 3 } } }, {}), /scale-sessions/);
});

test('the table has a column per user count and a total row', () => {
  const table = formatBillTable(profile, ops, [500, 1_000_000]);
  const lines = table.split('\n');
  assert.match(lines[0], /500 daily users \| 1,000,000 daily users/);
  assert.match(lines.at(-3), /\*\*total\*\* \| \*\*\$5\.00\*\* \|/);
});
