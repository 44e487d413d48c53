// node --test bench/harness/*.test.mjs  — the headline chart drawn from a summary (chart.mjs).
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { test } from 'node:test';
import { formatRatio, HEADLINE, renderChart } from './chart.mjs';

/** A summary with only what the chart reads: metadata and `ratios_ours_over_peer` entries. */
function summary(entries) {
  return {
    date: '2026-12-02T20:27:06.048Z',
    mode: 'full',
    rounds: 5,
    node: 'v24.21.0',
    ratios_ours_over_peer: entries.map(([metric, better, peer, ratio]) => ({ metric, better, peer, ours: 1, other: 1, ratio })),
  };
}

/** The bars' <rect> elements, each with its attributes. */
function bars(svg) {
  return [...svg.matchAll(/<rect class="bar"([^>]*)\/>/g)].map(([, attrs]) =>
    Object.fromEntries([...attrs.matchAll(/([\w-]+)="([^"]*)"/g)].map(([, k, v]) => [k, v])),
  );
}

/** The x of the 1× line. */
const center = (svg) => Number(svg.match(/<line x1="([\d.]+)"[^>]*stroke="#1f2328"/)[1]);

const MINIMAL = summary([
  ['W1.p50_ms', 'lower', 'durable-floor', 0.5],
  ['W1.p50_ms', 'lower', 'mcpagent', 1.17],
  ['W2.calls_per_s', 'higher', 'durable-floor', 0.5],
  ['W2.calls_per_s', 'higher', 'mcpagent', 1.55],
  ['W1.p50_ms', 'lower', 'sdk', 0.9], // a peer the chart does not show
]);

test('renders an SVG with one bar per ratio and its label', () => {
  const svg = renderChart(MINIMAL);
  assert.match(svg, /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg" width="760" /);
  assert.match(svg, /<\/svg>\n$/);
  assert.match(svg, /<rect class="bg" x="0" y="0" width="760" height="[\d.]+" fill="#ffffff"\/>/);
  assert.equal(bars(svg).length, 4);
  for (const label of ['0.50×', '1.17×', '1.55×']) assert.ok(svg.includes(`>${label}</text>`), label);
  assert.equal(svg.match(/>0\.50×<\/text>/g).length, 2);
  assert.ok(svg.includes('W1 echo call') && svg.includes('W2 concurrent echo calls'));
  assert.ok(svg.includes('2026-12-02'));
  assert.ok(!svg.includes('0.90×'), 'sdk is not charted');
  // Every element opened is closed (the text has no stray markup).
  assert.equal((svg.match(/<text[ >]/g) ?? []).length, (svg.match(/<\/text>/g) ?? []).length);
  assert.equal((svg.match(/<g[ >]/g) ?? []).length, (svg.match(/<\/g>/g) ?? []).length);
});

test('a metric with no ratio in the summary is left out, and so is a peer without one', () => {
  const svg = renderChart(
    summary([
      ['W1.p50_ms', 'lower', 'durable-floor', 1.2],
      ['W1.p50_ms', 'lower', 'mcpagent', null], // no McpAgent figure
      ['W3.events_per_s', 'higher', 'durable-floor', null],
      ['W3.events_per_s', 'higher', 'mcpagent', null],
    ]),
  );
  assert.deepEqual(
    bars(svg).map((b) => [b['data-metric'], b['data-peer']]),
    [['W1.p50_ms', 'durable-floor']],
  );
  assert.ok(!svg.includes('W3 progress events'), 'W3 has no ratio: no row');
  assert.ok(!svg.includes('W0 new session'), 'W0 is not in the summary: no row');
  assert.ok(!svg.includes('ours ÷ McpAgent'), 'no McpAgent bar: no McpAgent legend');
  assert.ok(!svg.includes('>n/a</text>'), 'nor an n/a in its place');
  // With McpAgent in another row, its missing bar says n/a.
  const both = renderChart(
    summary([
      ['W1.p50_ms', 'lower', 'durable-floor', 1.2],
      ['T1.p50_ms', 'lower', 'mcpagent', 2],
    ]),
  );
  assert.equal(bars(both).length, 2);
  assert.equal(both.match(/>n\/a<\/text>/g).length, 2);
});

test('bars point right when ours is better: a latency ratio of 0.5 right, a throughput ratio of 0.5 left', () => {
  const svg = renderChart(MINIMAL);
  const c = center(svg);
  const byKey = Object.fromEntries(bars(svg).map((b) => [`${b['data-metric']} ${b['data-peer']}`, b]));
  const latency = byKey['W1.p50_ms durable-floor'];
  const throughput = byKey['W2.calls_per_s durable-floor'];
  assert.equal(latency['data-direction'], 'better');
  assert.equal(Number(latency.x), c, 'starts at 1×, extends right');
  assert.equal(throughput['data-direction'], 'worse');
  assert.equal(Number(throughput.x) + Number(throughput.width), c, 'ends at 1×, extends left');
  assert.equal(latency.width, throughput.width, 'the same factor, the same length');
  assert.equal(byKey['W1.p50_ms mcpagent']['data-direction'], 'worse'); // 1.17× the time
  assert.equal(byKey['W2.calls_per_s mcpagent']['data-direction'], 'better'); // 1.55× the rate
  assert.ok(svg.includes('ours better'));
});

test('the better direction falls back to the workload list when a ratio entry lacks it', () => {
  const s = summary([['W2.calls_per_s', undefined, 'durable-floor', 2]]);
  s.workloads = [{ id: 'W2', metrics: [{ key: 'calls_per_s', label: 'W2 echo calls/s', better: 'higher' }] }];
  assert.equal(bars(renderChart(s))[0]['data-direction'], 'better');
  delete s.workloads;
  assert.equal(bars(renderChart(s)).length, 0, 'no direction known: nothing drawn');
});

test('a ratio past the axis is cut at its edge and keeps its true label', () => {
  const svg = renderChart(summary([['W3.first_event_ms', 'lower', 'mcpagent', 0.0151]]));
  const [bar] = bars(svg);
  assert.equal(Number(bar.x) + Number(bar.width), 686); // the plot's right edge
  assert.ok(svg.includes('>0.015×</text>'));
  assert.ok(svg.includes('<path d='), 'the cut is marked');
});

test('deterministic, and nothing but the summary: the same input gives the same bytes', () => {
  assert.equal(renderChart(MINIMAL), renderChart(structuredClone(MINIMAL)));
  assert.equal(renderChart(MINIMAL), renderChart(JSON.parse(JSON.stringify(MINIMAL))));
  assert.match(renderChart({}), /No headline ratio in this summary/);
});

test('formatRatio writes ratios as the results table does', () => {
  assert.equal(formatRatio(1.1666), '1.17×');
  assert.equal(formatRatio(0.5), '0.50×');
  assert.equal(formatRatio(16.29), '16.3×');
  assert.equal(formatRatio(0.0151), '0.015×');
});

test('the committed chart is the one chart.mjs draws from the committed summary', async () => {
  const latest = JSON.parse(await readFile(new URL('../results/latest.json', import.meta.url), 'utf8'));
  const committed = await readFile(new URL('../results/chart.svg', import.meta.url), 'utf8');
  assert.equal(committed, renderChart(latest, { source: 'bench/results/latest.json' }));
  const svg = renderChart(latest);
  assert.equal(bars(svg).length, bars(committed).length);
  assert.ok(bars(svg).length <= HEADLINE.length * 2);
});
