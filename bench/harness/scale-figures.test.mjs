// node --test bench/harness/*.test.mjs  — the scaled sessions run's arithmetic (scale-figures.mjs).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { continuation, derive, phaseBilling } from './scale-figures.mjs';

const CURSOR = '1234567890-1-1';
const event = (seq, text) => ({ id: `1234567890-1-${seq}`, text });

test('a resume that delivers exactly what was sent while cut, numbered on from the cursor, is a continuation', () => {
  const verdict = continuation({ cursor: CURSOR, events: [event(2, 'a'), event(3, 'b')], expected: ['a', 'b'], before: ['r'] });
  assert.deepEqual(verdict, { lost: 0, duplicated: 0, contiguous: true, in_order: true, ok: true });
});

test('a resume that misses an event, repeats one, or replays the cursor is not', () => {
  assert.equal(continuation({ cursor: CURSOR, events: [event(2, 'a')], expected: ['a', 'b'] }).lost, 1);
  const twice = continuation({ cursor: CURSOR, events: [event(2, 'a'), event(3, 'a'), event(4, 'b')], expected: ['a', 'b'] });
  assert.equal(twice.duplicated, 1);
  assert.equal(twice.ok, false);
  const replayed = continuation({
    cursor: CURSOR,
    events: [event(1, 'r'), event(2, 'a'), event(3, 'b')],
    expected: ['a', 'b'],
    before: ['r'],
  });
  assert.equal(replayed.duplicated, 1);
  assert.equal(replayed.contiguous, false);
});

test('a gap in the numbering, another stream or another order is not a continuation', () => {
  assert.equal(continuation({ cursor: CURSOR, events: [event(3, 'a'), event(4, 'b')], expected: ['a', 'b'] }).contiguous, false);
  const other = continuation({ cursor: CURSOR, events: [{ id: '1234567890-2-2', text: 'a' }, event(3, 'b')], expected: ['a', 'b'] });
  assert.equal(other.contiguous, false);
  const swapped = continuation({ cursor: CURSOR, events: [event(2, 'b'), event(3, 'a')], expected: ['a', 'b'] });
  assert.deepEqual([swapped.in_order, swapped.ok], [false, false]);
});

test('a phase bills the difference of the counters over it, all object classes summed', () => {
  const counters = (written, read, fetches) => ({
    BenchSession: { constructed: 0, requests: { fetch: fetches }, billed: { rowsWritten: written, rowsRead: read, requests: fetches } },
  });
  const billed = phaseBilling(counters(10, 20, 2), counters(40, 50, 12));
  assert.equal(billed.rows_written, 30);
  assert.equal(billed.rows_read, 30);
  assert.equal(billed.do_requests, 10);
  assert.equal(phaseBilling(undefined, counters(1, 1, 1)), undefined);
});

test('per-session figures divide each phase by the sessions, the reconnect by its own subset', () => {
  const phase = (written, rss, bytes) => ({
    billing: { rows_written: written, rows_read: 0, do_requests: written / 2 },
    rss_bytes: rss,
    disk: { bytes, session_logical_bytes: bytes / 2 },
  });
  const phases = {
    create: phase(1200, 0, 0),
    call: phase(300, 0, 0),
    hold: phase(200, 100 * 1024 * 300 + 1024, 8000),
    idle: phase(0, 100 * 1024 * 200 + 1024, 8000),
    resume: phase(400, 0, 0),
    reconnect: phase(80, 0, 0),
    delete: phase(0, 0, 0),
  };
  const derived = derive({
    phases,
    sessions: 100,
    baseline: { rss_bytes: 1024, disk: { bytes: 0, session_logical_bytes: 0 } },
    evicted: 100,
    reconnected: 10,
  });
  assert.deepEqual(derived.rows_written_per_session, {
    create: 12,
    call: 3,
    hold: 2,
    idle: 0,
    resume: 4,
    reconnect: 8,
    delete: 0,
    life: 21,
  });
  assert.equal(derived.rss_kb_per_session.held_after_open, 300);
  assert.equal(derived.rss_kb_per_session.held_after_idle, 200);
  assert.equal(derived.disk_bytes_per_session.hold, 80);
  assert.equal(derived.database_bytes_per_session.hold, 40);
  assert.deepEqual([derived.resident_after_idle, derived.all_evicted], [0, true]);
  assert.equal(
    derive({ phases, sessions: 100, baseline: { rss_bytes: 0, disk: { bytes: 0 } }, evicted: 99, reconnected: 10 }).all_evicted,
    false,
  );
});
