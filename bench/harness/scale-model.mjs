// What a deployment costs per month, from the benchmark's own counts and Cloudflare's published
// prices: docs/scale.md's cost table is this module's output, so that every figure in it can be
// traced to a bench row (B1's rows and requests per operation, W1's latency and CPU per call) or
// to the scaled run (bench/results/scale-sessions.json: bytes per session, a held stream's rows
// and CPU).
//
//   node bench/harness/scale-model.mjs [summary.json] [scale-sessions.json]   # prints the table
//
// Pure: `monthlyBill(profile, users, perOperation)` is arithmetic on its inputs, and
// `perOperationFrom(summary, scaleRun)` only reads them; nothing here measures anything. What the
// model leaves out is said where it is left out, in `ASSUMPTIONS`, which the table prints.
import { readFileSync } from 'node:fs';

/**
 * Workers Paid, USD, read 2026-12-07: https://developers.cloudflare.com/workers/platform/pricing/
 * (Standard usage model) and https://developers.cloudflare.com/durable-objects/platform/pricing/
 * (compute, and the SQLite storage backend's table).
 */
export const PRICES = Object.freeze({
  monthlyBase: 5,
  workerRequests: { included: 10e6, perMillion: 0.3 },
  workerCpuMs: { included: 30e6, perMillion: 0.02 },
  objectRequests: { included: 1e6, perMillion: 0.15 },
  objectGbSeconds: { included: 400e3, perMillion: 12.5 },
  rowsRead: { included: 25e9, perMillion: 0.001 },
  rowsWritten: { included: 50e6, perMillion: 1.0 },
  storageGbMonths: { included: 5, perUnit: 0.2 },
});

/** A Durable Object is billed for duration at 128 MB, whatever it uses (the pricing page). */
const OBJECT_GB = 0.128;
const DAYS_PER_MONTH = 30;

/**
 * What one daily user does in a day: one session (initialize and notifications/initialized), its
 * calls, the progress notifications they send, tasks created (each read back with `tasks/get`),
 * and the hours its client holds the session's GET stream open while nothing happens. The session
 * then expires (SESSION_TTL_MS, 1 h) and each task is purged (TASK_TTL_MS, 1 h).
 */
export const PROFILE = Object.freeze({ calls: 20, progressEvents: 100, tasks: 2, taskGets: 3, heldIdleHours: 8 });

export const ASSUMPTIONS = [
  'Worker CPU per request: W1 "server CPU per echo call", the whole workerd process (Worker and object together), so an upper bound for what the Worker alone is billed.',
  "An object's billed duration per request: W1's echo p50 (the whole round trip, so an upper bound); a hibernated object with its stream held costs none (W7).",
  "A held stream costs the Worker a heartbeat every HEARTBEAT_MS (15 s) and no object request (the relay): its CPU is the scaled run's idle phase, workerd's CPU ÷ streams ÷ hours, an upper bound (the objects' eviction falls in the same spell).",
  "Stored bytes: the scaled run's database bytes per session (page count × page size), kept from creation to expiry (held hours + the 1 h TTL); tasks' storage (1 h each) is left out.",
  "`deleteAll()` counted as workerd counts it (0 rows); billed per row removed it would add each session's and task's stored rows once (bench/README.md, *What the cost claim rests on*).",
  'Workers requests: one per client request; the GET stream is one request however long it is held.',
];

/**
 * Rows each operation leaves stored until its object's final `deleteAll()` (bench/README.md, *Rows
 * per operation*): a session its row, stream 1 and the initialize answer (its four tables' own
 * rows not counted); a call its request id, stream and answer; a progress event its row; a held
 * GET stream its stream row; a task its row. Were `deleteAll()` billed per row removed, each would
 * be written once more; the table prints that reading beside the other.
 */
export const ROWS_LEFT_AT_END = Object.freeze({
  session: 3,
  call: 3,
  progressEvent: 1,
  task: 1,
  taskGet: 0,
  expiry: 0,
  purge: 0,
  heldStream: 1,
});

/** Per-operation figures from a bench summary's medians (peer `ours`) and the scaled run. */
export function perOperationFrom(summary, scaleRun) {
  const m = (key) => {
    const value = summary.medians?.[key]?.ours;
    if (typeof value !== 'number' || !Number.isFinite(value))
      throw new Error(`the summary has no figure for ${key} (ours): run the full bench`);
    return value;
  };
  const op = (name) => ({ written: m(`B1.${name}_written`), read: m(`B1.${name}_read`), requests: m(`B1.${name}_requests`) });
  const d = scaleRun?.derived;
  if (!d) throw new Error('the scaled run has no derived figures: npm run scale-sessions');
  const figure = (value, name) => {
    if (typeof value !== 'number' || !Number.isFinite(value)) throw new Error(`the scaled run has no ${name}: npm run scale-sessions`);
    return value;
  };
  return {
    session: op('session'),
    call: op('echo'),
    progressEvent: op('event'),
    task: op('task'),
    taskGet: op('task_get'),
    expiry: op('expiry'),
    purge: op('purge'),
    heldStream: {
      written: figure(d.rows_written_per_session?.hold, 'rows written per GET stream'),
      read: figure(d.rows_read_per_session?.hold, 'rows read per GET stream'),
      requests: figure(d.do_requests_per_session?.hold, 'object requests per GET stream'),
    },
    workerCpuMsPerRequest: m('W1.cpu_ms_per_call'),
    objectSecondsPerRequest: m('W1.p50_ms') / 1000,
    cpuMsPerHeldStreamHour: figure(d.cpu_ms_per_held_stream_hour, 'CPU per held stream-hour'),
    storedBytesPerSession: figure(d.database_bytes_per_session?.idle, 'database bytes per session'),
    source: { summary: `${summary.date} (${summary.mode}, ${summary.rounds} rounds)`, scaleRun: scaleRun.date },
  };
}

/** Usage of one daily user in one day, in billed units. */
export function dailyUsage(profile, op) {
  const count = {
    session: 1,
    call: profile.calls,
    progressEvent: profile.progressEvents,
    task: profile.tasks,
    taskGet: profile.tasks * profile.taskGets,
    expiry: 1,
    purge: profile.tasks,
    heldStream: profile.heldIdleHours > 0 ? 1 : 0,
  };
  let written = 0;
  let leftAtEnd = 0;
  let read = 0;
  let objectRequests = 0;
  for (const [name, n] of Object.entries(count)) {
    written += n * op[name].written;
    leftAtEnd += n * ROWS_LEFT_AT_END[name];
    read += n * op[name].read;
    objectRequests += n * op[name].requests;
  }
  // The client's requests: initialize, notifications/initialized, each call, each task's create
  // and gets, the GET stream. Alarms (expiry, purge) are object requests, not Worker requests.
  const workerRequests = 2 + profile.calls + profile.tasks * (1 + profile.taskGets) + count.heldStream;
  return {
    workerRequests,
    workerCpuMs: workerRequests * op.workerCpuMsPerRequest + profile.heldIdleHours * op.cpuMsPerHeldStreamHour,
    objectRequests,
    objectGbSeconds: objectRequests * op.objectSecondsPerRequest * OBJECT_GB,
    rowsWritten: written,
    rowsWrittenIfDeleteAllBilled: written + leftAtEnd,
    rowsRead: read,
    // GB held for (held hours + the 1 h TTL) of 24, averaged over the month as the platform does.
    storageGb: (op.storedBytesPerSession / 1e9) * ((profile.heldIdleHours + 1) / 24),
  };
}

const overage = (used, { included, perMillion }) => (Math.max(0, used - included) / 1e6) * perMillion;

/** The month's bill for `users` daily users, line by line, in USD. */
export function monthlyBill(profile, users, op, prices = PRICES) {
  const day = dailyUsage(profile, op);
  const month = Object.fromEntries(Object.entries(day).map(([k, v]) => [k, k === 'storageGb' ? v * users : v * users * DAYS_PER_MONTH]));
  const lines = {
    base: prices.monthlyBase,
    workerRequests: overage(month.workerRequests, prices.workerRequests),
    workerCpu: overage(month.workerCpuMs, prices.workerCpuMs),
    objectRequests: overage(month.objectRequests, prices.objectRequests),
    objectDuration: overage(month.objectGbSeconds, prices.objectGbSeconds),
    rowsWritten: overage(month.rowsWritten, prices.rowsWritten),
    // Not part of the total: the other reading of deleteAll() (ASSUMPTIONS), printed beside it.
    rowsWrittenIfDeleteAllBilled: overage(month.rowsWrittenIfDeleteAllBilled, prices.rowsWritten),
    rowsRead: overage(month.rowsRead, prices.rowsRead),
    storage: Math.max(0, month.storageGb - prices.storageGbMonths.included) * prices.storageGbMonths.perUnit,
  };
  const { rowsWrittenIfDeleteAllBilled, ...billed } = lines;
  const total = Object.values(billed).reduce((a, b) => a + b, 0);
  return { users, month, lines, total, totalIfDeleteAllBilled: total - lines.rowsWritten + rowsWrittenIfDeleteAllBilled };
}

const usd = (x) => (x < 0.005 ? '0' : x < 100 ? x.toFixed(2) : Math.round(x).toLocaleString('en-US'));
const qty = (x) =>
  x >= 1e9
    ? `${(x / 1e9).toPrecision(3)} G`
    : x >= 1e6
      ? `${(x / 1e6).toPrecision(3)} M`
      : x >= 1e3
        ? `${(x / 1e3).toPrecision(3)} k`
        : x.toPrecision(3);

/** docs/scale.md's table: one column per user count, a row per billed line (usage, then USD). */
export function formatBillTable(profile, op, userCounts = [1_000, 100_000, 1_000_000]) {
  const bills = userCounts.map((n) => monthlyBill(profile, n, op));
  const rows = [
    ['Worker requests', 'workerRequests', 'workerRequests'],
    ['Worker CPU ms', 'workerCpuMs', 'workerCpu'],
    ['Durable Object requests', 'objectRequests', 'objectRequests'],
    ['Durable Object GB-s', 'objectGbSeconds', 'objectDuration'],
    ['rows written', 'rowsWritten', 'rowsWritten'],
    ['rows read', 'rowsRead', 'rowsRead'],
    ['stored GB-months', 'storageGb', 'storage'],
  ];
  const head = `| a month (30 days) | ${userCounts.map((n) => `${n.toLocaleString('en-US')} daily users`).join(' | ')} |`;
  const lines = [head, `|---|${userCounts.map(() => '---').join('|')}|`];
  lines.push(`| Workers Paid plan | ${bills.map(() => '$5').join(' | ')} |`);
  for (const [label, used, billed] of rows) {
    lines.push(`| ${label} | ${bills.map((b) => `${qty(b.month[used])}: $${usd(b.lines[billed])}`).join(' | ')} |`);
  }
  lines.push(`| **total** | ${bills.map((b) => `**$${usd(b.total)}**`).join(' | ')} |`);
  lines.push(`| per daily user | ${bills.map((b) => `$${(b.total / b.users).toPrecision(2)}`).join(' | ')} |`);
  lines.push(
    `| if \`deleteAll()\` is billed per row removed: rows written; total | ${bills
      .map(
        (b) =>
          `${qty(b.month.rowsWrittenIfDeleteAllBilled)}: $${usd(b.lines.rowsWrittenIfDeleteAllBilled)}; $${usd(b.totalIfDeleteAllBilled)}`,
      )
      .join(' | ')} |`,
  );
  return lines.join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const summary = JSON.parse(readFileSync(process.argv[2] ?? new URL('../results/latest.json', import.meta.url), 'utf8'));
  const scaleRun = JSON.parse(readFileSync(process.argv[3] ?? new URL('../results/scale-sessions.json', import.meta.url), 'utf8'));
  const op = perOperationFrom(summary, scaleRun);
  console.log(`Profile per daily user: ${JSON.stringify(PROFILE)}; bench ${op.source.summary}; scaled run ${op.source.scaleRun}\n`);
  console.log(formatBillTable(PROFILE, op));
  console.log(`\n${ASSUMPTIONS.map((a) => `- ${a}`).join('\n')}`);
}
