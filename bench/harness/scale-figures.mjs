// The arithmetic of the scaled sessions run (scale-sessions.mjs), apart from its I/O so that it
// can be tested: what one phase billed (the peer's counters before and after it, ../billing.mjs's
// perOperation over the whole phase), whether a reconnect with Last-Event-ID continued its
// stream exactly, and the per-session figures docs/scale.md quotes, derived from the phases.
// Pure functions over plain data (tested in scale-figures.test.mjs); no timing is judged here.
import { perOperation } from './billing.mjs';

/** The phases of the run, in order; `derive` reads them by name. */
export const PHASES = Object.freeze(['create', 'call', 'hold', 'idle', 'resume', 'reconnect', 'delete']);

/**
 * What one phase billed, in all (not per operation): rows written and read, Durable Object
 * requests, and the counters behind them. `before`/`after` are GET /bench/billing's `classes`;
 * undefined (counting off) gives undefined.
 */
export function phaseBilling(before, after) {
  if (before === undefined || after === undefined) return undefined;
  const op = perOperation(before, after, 1);
  return {
    rows_written: op.billed.rowsWritten,
    rows_read: op.billed.rowsRead,
    do_requests: op.billed.requests,
    requests: op.requests,
    alarms_set: op.alarms_set,
    alarm_runs: op.alarm_runs,
    delete_all: op.delete_all,
    constructed: op.constructed,
    by_statement: op.by_statement,
  };
}

/** An SSE event id `<epoch>-<stream>-<seq>` (src/core/event-id.ts), or undefined. */
export function parseEventId(id) {
  const match = /^([0-9]+)-([0-9]+)-([0-9]+)$/.exec(id ?? '');
  return match === null ? undefined : { stream: `${match[1]}-${match[2]}`, seq: Number(match[3]) };
}

/**
 * Whether a stream resumed after event `cursor` continued it exactly: `events` are what the
 * resumed stream delivered that carry a message ({ id, text }, text undefined for a message
 * that is no log line), `expected` the texts sent while it was cut, in order. Lost: expected
 * texts not delivered; duplicated: texts delivered twice, or ones from before the cursor
 * (`before`); contiguous: every event of the cursor's stream, numbered on from it by one.
 */
export function continuation({ cursor, events, expected, before = [] }) {
  const from = parseEventId(cursor);
  const texts = events.map((event) => event.text);
  const seen = new Set();
  let duplicated = 0;
  for (const text of texts) {
    if (seen.has(text) || before.includes(text)) duplicated++;
    seen.add(text);
  }
  const lost = expected.filter((text) => !seen.has(text)).length;
  let contiguous = from !== undefined;
  let seq = from?.seq ?? 0;
  for (const event of events) {
    const id = parseEventId(event.id);
    if (id === undefined || id.stream !== from?.stream || id.seq !== seq + 1) contiguous = false;
    seq = id?.seq ?? seq;
  }
  const inOrder = texts.filter((text) => expected.includes(text)).join('\n') === expected.filter((text) => seen.has(text)).join('\n');
  return { lost, duplicated, contiguous, in_order: inOrder, ok: lost === 0 && duplicated === 0 && contiguous && inOrder };
}

const per = (value, count) => (typeof value === 'number' && count > 0 ? value / count : null);
const kb = (bytes) => (typeof bytes === 'number' ? bytes / 1024 : null);

/**
 * The per-session figures of a run: `phases` by name (each with `billing`, `rss_bytes`,
 * `disk`, `instances`), `sessions` the sessions that made it through creation, `baseline` the
 * readings before the first phase, `evicted` the objects the resume phase woke (constructed
 * anew: they had been evicted), `reconnected` the sessions of the reconnect phase.
 */
export function derive({ phases, sessions, baseline, evicted, reconnected }) {
  const rows = (name, count = sessions) => per(phases[name]?.billing?.rows_written, count);
  const lifeRows = ['create', 'call', 'hold', 'idle', 'resume', 'delete'].map((name) => rows(name));
  const rss = (name) => phases[name]?.rss_bytes;
  const rssPerSession = (name) => (typeof rss(name) === 'number' ? kb(per(rss(name) - baseline.rss_bytes, sessions)) : null);
  const diskPerSession = (name) => per((phases[name]?.disk?.bytes ?? NaN) - baseline.disk.bytes, sessions);
  const databasePerSession = (name) =>
    per((phases[name]?.disk?.session_logical_bytes ?? NaN) - baseline.disk.session_logical_bytes, sessions);
  const byPhase = (of) =>
    Object.fromEntries(['create', 'call', 'hold', 'idle', 'resume', 'reconnect', 'delete'].map((name) => [name, of(name)]));
  return {
    rows_written_per_session: {
      create: rows('create'),
      call: rows('call'),
      hold: rows('hold'),
      idle: rows('idle'),
      resume: rows('resume'),
      reconnect: rows('reconnect', reconnected),
      delete: rows('delete'),
      // A session's life without the reconnect (a subset has one): create, call, hold, idle, resume, delete.
      life: lifeRows.every((value) => value !== null) ? lifeRows.reduce((a, b) => a + b, 0) : null,
    },
    rows_read_per_session: Object.fromEntries(
      PHASES.map((name) => [name, per(phases[name]?.billing?.rows_read, name === 'reconnect' ? reconnected : sessions)]),
    ),
    do_requests_per_session: Object.fromEntries(
      PHASES.map((name) => [name, per(phases[name]?.billing?.do_requests, name === 'reconnect' ? reconnected : sessions)]),
    ),
    // Files on disk (databases, their WAL and shared-memory index), and the databases' own size.
    disk_bytes_per_session: byPhase(diskPerSession),
    database_bytes_per_session: byPhase(databasePerSession),
    rss_kb_per_session: {
      held_after_open: rssPerSession('hold'),
      held_after_idle: rssPerSession('idle'),
      held_after_resume: rssPerSession('resume'),
      after_delete: rssPerSession('delete'),
    },
    evicted_during_idle: evicted,
    resident_after_idle: typeof evicted === 'number' ? sessions - evicted : null,
    all_evicted: evicted === sessions,
  };
}
