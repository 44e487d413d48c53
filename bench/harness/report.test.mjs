// node --test bench/harness/*.test.mjs  — the summary committed as bench/results/latest.json.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatTable, ratios, summarize, toJson, toSummary } from './report.mjs';
import { WORKLOADS } from './workloads/index.mjs';

const W1 = { id: 'W1', title: 'echo', metrics: [{ key: 'p50_ms', label: 'W1 echo p50 ms', better: 'lower' }], first_round_only: false };
const W4b = {
  id: 'W4b',
  title: 'resume',
  metrics: [{ key: 'result_arrived', label: 'W4b', better: 'higher', kind: 'yesno' }],
  first_round_only: false,
};
const W6 = {
  id: 'W6',
  title: 'memory',
  metrics: [{ key: 'kb_per_session', label: 'W6 KB per session', better: 'lower' }],
  first_round_only: true,
};

/** W0 and B1 as run.mjs records them (their real metric lists). */
const [W0, B1] = ['W0', 'B1'].map((id) => {
  const { title, metrics, firstRoundOnly } = WORKLOADS.find((w) => w.id === id);
  return { id, title, metrics, first_round_only: Boolean(firstRoundOnly) };
});
/** A B1 sample: every metric null but those given. */
const b1Metrics = (values) => ({ ...Object.fromEntries(B1.metrics.map(({ key }) => [key, null])), ...values });

/** A raw result as run.mjs builds it, with only what each case varies. */
function rawResult({ workloads, samples, unavailable = {} }) {
  return {
    date: '2026-12-01T16:30:06.270Z',
    mode: 'full',
    rounds: 2,
    workerd_via: 'miniflare',
    sizes: { w1Calls: 300 },
    node: 'v24.21.0',
    machine: { platform: 'linux', cpus: 2, loadavg_at_end: [0.21, 0.38, 0.33] },
    workloads,
    peers: [
      { name: 'ours', url: 'http://127.0.0.1:1/mcp', pid: 1 },
      { name: 'floor', url: 'http://127.0.0.1:2/mcp', pid: 2 },
    ],
    unavailable,
    duration_ms: { benchmark: 1000.5, total: 1200.25 },
    medians: { 'W1.p50_ms': { ours: 2.2, floor: 1.1 } },
    ratios_ours_over_peer: [{ metric: 'W1.p50_ms', better: 'lower', peer: 'floor', ours: 2.2, other: 1.1, ratio: 2 }],
    samples,
    table: 'metric  better  ours  floor',
  };
}

const cases = [
  {
    name: 'one value per round and peer, raw samples dropped',
    result: rawResult({
      workloads: [W1],
      samples: {
        W1: {
          ours: [
            { round: 1, metrics: { p50_ms: 2.3490380000002915 }, raw: { latencies_ms: [2.1, 2.3, 2.5] }, duration_ms: 900 },
            { round: 2, metrics: { p50_ms: 2.1183669999882113 }, raw: { latencies_ms: [2.0, 2.1, 2.2] }, duration_ms: 850 },
          ],
          floor: [
            { round: 1, metrics: { p50_ms: 1.1857669999953941 }, raw: { latencies_ms: [1.1] }, duration_ms: 900 },
            { round: 2, metrics: { p50_ms: 1.0759600000019418 }, raw: { latencies_ms: [1.0] }, duration_ms: 850 },
          ],
        },
      },
    }),
    perRound: { 'W1.p50_ms': { ours: [2.3490380000002915, 2.1183669999882113], floor: [1.1857669999953941, 1.0759600000019418] } },
    notes: {},
  },
  {
    name: 'a failed or skipped round is null in its place; errors and statuses become notes',
    result: rawResult({
      workloads: [W1, W4b],
      samples: {
        W1: {
          ours: [
            { round: 1, error: 'W1 across peers: no end within 300000 ms', duration_ms: 300000 },
            { round: 2, metrics: { p50_ms: 2.5 }, duration_ms: 800 },
          ],
          floor: [
            { round: 1, metrics: { p50_ms: 1.25 }, duration_ms: 800 },
            { round: 2, error: 'skipped: run deadline passed' },
          ],
        },
        W4b: {
          ours: [
            { round: 1, metrics: { result_arrived: 1 }, raw: { resume_status: 200 } },
            { round: 2, metrics: { result_arrived: 1 }, raw: { resume_status: 200 } },
          ],
          floor: [
            { round: 1, metrics: { result_arrived: 0 }, status: 'cannot resume: HTTP 405', raw: { resume_status: 405 } },
            { round: 2, metrics: { result_arrived: 0 }, status: 'cannot resume: HTTP 405', raw: { resume_status: 405 } },
          ],
        },
      },
    }),
    perRound: {
      'W1.p50_ms': { ours: [null, 2.5], floor: [1.25, null] },
      'W4b.result_arrived': { ours: [1, 1], floor: [0, 0] },
    },
    notes: {
      W1: { ours: ['W1 across peers: no end within 300000 ms'], floor: ['skipped: run deadline passed'] },
      W4b: { floor: ['cannot resume: HTTP 405'] },
    },
  },
  {
    name: 'W0 and B1: B1 runs in round 1 only; a peer without counters, or an operation it lacks, stays null',
    result: rawResult({
      workloads: [W0, B1],
      samples: {
        W0: {
          ours: [
            { round: 1, metrics: { echo_p50_ms: 2.5, echo_p99_ms: 6, sequence_p50_ms: 7.25, sequence_p99_ms: 12 } },
            { round: 2, metrics: { echo_p50_ms: 2.25, echo_p99_ms: 5, sequence_p50_ms: 7, sequence_p99_ms: 11 } },
          ],
          floor: [
            { round: 1, metrics: { echo_p50_ms: 1, echo_p99_ms: 2, sequence_p50_ms: 3, sequence_p99_ms: 4 } },
            { round: 2, error: 'W0 echo: no result (HTTP 500)' },
          ],
        },
        B1: {
          ours: [
            {
              round: 1,
              metrics: b1Metrics({ echo_written: 3, echo_read: 2, echo_requests: 1, echo_usd_per_m: 3.152, delete_delete_all: 1 }),
              status: 'expiry, purge: 1 of 5 BenchSession objects ran deleteAll within 30000 ms',
              raw: { operations: { echo: { count: 10 } } },
            },
          ],
          floor: [{ round: 1, metrics: b1Metrics({}), status: 'no billing counters (GET /bench/billing: ours, durable-floor, mcpagent)' }],
        },
      },
    }),
    perRound: {
      ...Object.fromEntries(
        B1.metrics.map(({ key }) => [
          `B1.${key}`,
          {
            ours: [{ echo_written: 3, echo_read: 2, echo_requests: 1, echo_usd_per_m: 3.152, delete_delete_all: 1 }[key] ?? null],
            floor: [null],
          },
        ]),
      ),
      'W0.echo_p50_ms': { ours: [2.5, 2.25], floor: [1, null] },
      'W0.echo_p99_ms': { ours: [6, 5], floor: [2, null] },
      'W0.sequence_p50_ms': { ours: [7.25, 7], floor: [3, null] },
      'W0.sequence_p99_ms': { ours: [12, 11], floor: [4, null] },
    },
    notes: {
      W0: { floor: ['W0 echo: no result (HTTP 500)'] },
      B1: {
        ours: ['expiry, purge: 1 of 5 BenchSession objects ran deleteAll within 30000 ms'],
        floor: ['no billing counters (GET /bench/billing: ours, durable-floor, mcpagent)'],
      },
    },
  },
  {
    name: 'a first-round-only workload has one value; a metric of null stays null',
    result: rawResult({
      workloads: [W6],
      unavailable: { sdk: 'start sdk: no end within 180000 ms' },
      samples: {
        W6: {
          ours: [
            { round: 1, metrics: { kb_per_session: 540.588 }, raw: { rss_before: 1, rss_after: 2, kb_per_session_second_half: 530.1 } },
          ],
          floor: [
            { round: 1, metrics: { kb_per_session: null }, status: 'no stream held (GET stream: HTTP 405)', raw: { warmup_status: 405 } },
          ],
        },
      },
    }),
    perRound: { 'W6.kb_per_session': { ours: [540.588], floor: [null] } },
    notes: { W6: { floor: ['no stream held (GET stream: HTTP 405)'] } },
  },
];

for (const { name, result, perRound, notes } of cases) {
  test(`toSummary: ${name}`, () => {
    const before = structuredClone(result);
    const summary = toSummary(result, { rawFile: 'bench/results/raw/2026-12-01T16-30-06-270Z.json' });
    assert.deepEqual(result, before, 'the raw result is not modified');
    assert.deepEqual(Object.keys(summary), [
      'date',
      'mode',
      'rounds',
      'workerd_via',
      'sizes',
      'node',
      'machine',
      'workloads',
      'peers',
      'unavailable',
      'duration_ms',
      'raw_samples',
      'medians',
      'ratios_ours_over_peer',
      'per_round',
      'notes',
      'table',
    ]);
    for (const key of [
      'date',
      'mode',
      'rounds',
      'workerd_via',
      'sizes',
      'node',
      'machine',
      'workloads',
      'peers',
      'unavailable',
      'duration_ms',
      'medians',
      'ratios_ours_over_peer',
      'table',
    ]) {
      assert.deepEqual(summary[key], result[key], key);
    }
    assert.equal(summary.raw_samples, 'bench/results/raw/2026-12-01T16-30-06-270Z.json');
    assert.deepEqual(summary.per_round, perRound);
    assert.deepEqual(summary.notes, notes);
    assert.equal(JSON.stringify(summary).includes('"raw"'), false, 'no raw sample is kept');
    assert.deepEqual(JSON.parse(toJson(summary)), summary, 'the JSON text reads back as the summary');
  });
}

test('toSummary without a raw file records none', () => {
  const summary = toSummary(rawResult({ workloads: [], samples: {} }));
  assert.equal('raw_samples' in summary, false);
  assert.deepEqual(summary.per_round, {});
  assert.deepEqual(summary.notes, {});
});

test('toJson keeps number arrays and small flat objects on one line', () => {
  assert.equal(
    toJson({ a: [1.5, null, 2], b: { x: 1, y: 'z' }, c: ['s', 't'], d: {}, e: [], f: undefined }),
    '{\n  "a": [1.5, null, 2],\n  "b": { "x": 1, "y": "z" },\n  "c": [\n    "s",\n    "t"\n  ],\n  "d": {},\n  "e": []\n}',
  );
  const nine = Object.fromEntries(Array.from({ length: 9 }, (_, i) => [`k${i}`, i]));
  assert.equal(toJson(nine).split('\n').length, 11, 'more than 8 keys: one per line');
});

test('B1 in the table: one row per operation and column; n/a for a peer without counters, where no operation was measured', () => {
  const samples = {
    B1: {
      ours: [{ round: 1, metrics: b1Metrics({ echo_written: 3, echo_usd_per_m: 3.152 }), status: 'tasks: none' }],
      floor: [{ round: 1, metrics: b1Metrics({}), status: 'no billing counters' }],
    },
  };
  const rows = summarize([{ id: 'B1', metrics: B1.metrics }], ['ours', 'floor'], samples);
  assert.equal(rows.length, B1.metrics.length);
  const table = formatTable(rows, ['ours', 'floor'], ratios(rows, ['ours', 'floor']));
  const line = (label) => table.split('\n').find((l) => l.startsWith(label));
  assert.match(line('B1 echo call: rows written'), /\s3\s+n\/a\s+-$/);
  assert.match(line('B1 echo call: USD per million'), /\s3\.15\s+n\/a\s+-$/);
  assert.match(line('B1 session DELETE, with what it causes later: deleteAll calls'), /\sn\/a\s+n\/a\s+-$/);
  for (const [workload, label] of [
    ['W0', 'W0 first echo of a new session p50 ms'],
    ['B1', 'B1 new session (initialize + initialized): setAlarm calls'],
    ['B1', 'B1 idle session-minute, GET stream held: alarm invocations'],
    ['B1', 'B1 session expiry (ours-ttl: TTL 2 s): deleteAll calls'],
  ]) {
    assert.ok(
      WORKLOADS.find((w) => w.id === workload).metrics.some((m) => m.label === label),
      label,
    );
  }
});
