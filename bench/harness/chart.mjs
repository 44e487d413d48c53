// The benchmark's headline ratios as an SVG chart, drawn from a run's summary (report.mjs
// `toSummary`, bench/results/latest.json): for each headline metric, `ours ÷ durable floor` and
// `ours ÷ mcpagent` as horizontal bars on a log scale around 1×, turned so that a bar pointing
// right always means ours is better (lower for ms, KB, USD and rows; higher for calls/s and
// events/s). `renderChart(summary)` is pure and deterministic (the same summary gives the same
// bytes); run.mjs calls it after a full run and writes bench/results/chart.svg. As a command:
//   node bench/harness/chart.mjs [results.json] [out.svg]   (default bench/results/latest.json → bench/results/chart.svg)
// Plain Node ESM, no dependencies.
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** The metrics the chart shows, in order; a metric the summary has no ratio for is left out. */
export const HEADLINE = [
  { metric: 'W0.sequence_p50_ms', label: 'W0 new session → first echo', unit: 'p50 ms' },
  { metric: 'W1.p50_ms', label: 'W1 echo call', unit: 'p50 ms' },
  { metric: 'W2.calls_per_s', label: 'W2 concurrent echo calls', unit: 'calls/s' },
  { metric: 'W3.events_per_s', label: 'W3 progress events', unit: 'events/s' },
  { metric: 'W3.first_event_ms', label: 'W3 first progress event', unit: 'ms' },
  { metric: 'W6.kb_per_session', label: 'W6 memory per idle session', unit: 'KB' },
  { metric: 'T1.p50_ms', label: 'T1 task created → completed', unit: 'p50 ms' },
  { metric: 'B1.echo_usd_per_m', label: 'B1 billed cost, echo call', unit: 'USD per million' },
  { metric: 'B1.session_usd_per_m', label: 'B1 billed cost, new session', unit: 'USD per million' },
  { metric: 'B1.echo_written', label: 'B1 rows written, echo call', unit: 'rows' },
];

/** The peers ours is set against, one bar each per metric. */
export const PEERS = [
  { name: 'durable-floor', label: 'ours ÷ durable floor', color: '#0969da' },
  { name: 'mcpagent', label: 'ours ÷ McpAgent', color: '#d4691c' },
];

const WIDTH = 760;
const MARGIN = 20;
const PLOT_LEFT = 316;
const PLOT_RIGHT = 686;
const CENTER = (PLOT_LEFT + PLOT_RIGHT) / 2;
const HALF = (PLOT_RIGHT - PLOT_LEFT) / 2;
const ROW_HEIGHT = 46;
const BAR_HEIGHT = 14;
const HEADER_HEIGHT = 112;
/** Axis limits to choose from (the smallest that holds every bar), with their ticks; past the last, bars are cut. */
const AXES = [
  { limit: 1.5, ticks: [1.25, 1.5] },
  { limit: 2, ticks: [1.5, 2] },
  { limit: 3, ticks: [1.5, 2, 3] },
  { limit: 5, ticks: [2, 5] },
  { limit: 10, ticks: [2, 5, 10] },
];
const FONT = "-apple-system, BlinkMacSystemFont, 'Segoe UI', 'Noto Sans', Helvetica, Arial, sans-serif";
const INK = '#1f2328';
const MUTED = '#59636e';
const GRID = '#d1d9e0';

const escapeXml = (text) =>
  String(text).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c]);

/** A number for an attribute: at most two decimals, no trailing zeros. */
const px = (value) => String(Math.round(value * 100) / 100);

/** A ratio as the results table writes it: 1.17×, 0.58×, 16.3×, 0.015×. */
export function formatRatio(ratio) {
  if (ratio >= 10) return `${Number(ratio.toPrecision(3))}×`;
  if (ratio >= 0.1) return `${ratio.toFixed(2)}×`;
  return `${Number(ratio.toPrecision(2))}×`;
}

const formatFactor = (factor) => `${Number(factor.toPrecision(3))}×`;

/** Whether `ours ÷ peer` is good for ours: 'better', 'worse' or 'even', from the metric's better direction. */
export function direction(ratio, better) {
  if (ratio === 1) return 'even';
  return (better === 'higher') === ratio > 1 ? 'better' : 'worse';
}

/** The metric's better direction ('lower' | 'higher'), from the ratio entry or else the workload's metric list. */
function betterOf(summary, metric, entry) {
  if (entry?.better === 'lower' || entry?.better === 'higher') return entry.better;
  const [id, key] = metric.split('.');
  const found = summary.workloads?.find((w) => w.id === id)?.metrics?.find((m) => m.key === key)?.better;
  return found === 'lower' || found === 'higher' ? found : undefined;
}

/** The chart's rows: each headline metric with at least one usable ratio, and its bars. */
export function chartRows(summary) {
  const list = Array.isArray(summary?.ratios_ours_over_peer) ? summary.ratios_ours_over_peer : [];
  const rows = [];
  for (const headline of HEADLINE) {
    const bars = [];
    let better;
    for (const peer of PEERS) {
      const entry = list.find((r) => r.metric === headline.metric && r.peer === peer.name);
      const ratio = entry?.ratio;
      if (typeof ratio !== 'number' || !Number.isFinite(ratio) || ratio <= 0) continue;
      const b = betterOf(summary, headline.metric, entry);
      if (b === undefined) continue;
      better = b;
      bars.push({ peer: peer.name, ratio, direction: direction(ratio, b), factor: Math.max(ratio, 1 / ratio) });
    }
    if (bars.length) rows.push({ ...headline, better, bars });
  }
  return rows;
}

function titleLine(summary, source) {
  const parts = [];
  if (typeof summary.date === 'string') parts.push(summary.date.slice(0, 10));
  if (typeof summary.commit === 'string') parts.push(`commit ${summary.commit}`);
  if (typeof summary.mode === 'string')
    parts.push(
      `${summary.mode} mode${Number.isInteger(summary.rounds) ? `, ${summary.rounds} round${summary.rounds === 1 ? '' : 's'}, medians` : ''}`,
    );
  if (typeof summary.node === 'string') parts.push(`Node ${summary.node}`);
  if (typeof summary.workerd_via === 'string') parts.push(`workerd via ${summary.workerd_via}`);
  if (source) parts.push(source);
  return parts.join(' · ');
}

/**
 * The SVG text of the chart for a summary. `options.source`, the summary's file as it should
 * be named in the chart (e.g. bench/results/latest.json), is optional.
 */
export function renderChart(summary, { source } = {}) {
  const rows = chartRows(summary ?? {});
  const factors = rows.flatMap((row) => row.bars.map((bar) => bar.factor));
  const axis = AXES.find((a) => a.limit >= Math.max(1, ...factors)) ?? AXES[AXES.length - 1];
  const scale = HALF / Math.log(axis.limit);
  const peersShown = PEERS.filter((peer) => rows.some((row) => row.bars.some((bar) => bar.peer === peer.name)));
  const plotTop = HEADER_HEIGHT;
  const plotBottom = plotTop + rows.length * ROW_HEIGHT;
  const footerTop = plotBottom + 34;
  const height = rows.length === 0 ? 100 : footerTop + 40;
  const out = [];
  const add = (line) => out.push(line);

  add(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${px(height)}" viewBox="0 0 ${WIDTH} ${px(height)}" role="img" aria-labelledby="chart-title">`,
  );
  add(`<title id="chart-title">mcp-edge-sessions benchmark: ours against the durable floor and McpAgent, headline ratios</title>`);
  add(`<rect class="bg" x="0" y="0" width="${WIDTH}" height="${px(height)}" fill="#ffffff"/>`);
  add(`<g font-family="${escapeXml(FONT)}" fill="${INK}">`);
  add(`<text x="${MARGIN}" y="30" font-size="17" font-weight="600">mcp-edge-sessions benchmark: headline ratios</text>`);
  add(`<text x="${MARGIN}" y="50" font-size="12" fill="${MUTED}">${escapeXml(titleLine(summary ?? {}, source))}</text>`);

  // Legend: one swatch per peer shown.
  let legendX = MARGIN;
  for (const peer of peersShown) {
    add(`<rect class="swatch" x="${legendX}" y="64" width="14" height="14" rx="2" fill="${peer.color}"/>`);
    add(`<text x="${legendX + 20}" y="75.5" font-size="13">${escapeXml(peer.label)}</text>`);
    legendX += 20 + peer.label.length * 8 + 24;
  }

  if (rows.length === 0) {
    add(
      `<text x="${MARGIN}" y="80" font-size="13" fill="${MUTED}">No headline ratio in this summary (it needs ours and the durable floor or McpAgent).</text>`,
    );
    add('</g>');
    add('</svg>');
    return `${out.join('\n')}\n`;
  }

  // Axis: direction words, ticks on a log scale, the 1× line.
  const xOf = (factor, dir) => CENTER + (dir === 'worse' ? -1 : 1) * scale * Math.log(Math.min(factor, axis.limit));
  add(`<text x="${CENTER - 8}" y="${plotTop - 10}" font-size="12" font-weight="600" text-anchor="end">◂ ours worse</text>`);
  add(`<text x="${CENTER + 8}" y="${plotTop - 10}" font-size="12" font-weight="600">ours better ▸</text>`);
  rows.forEach((_, i) => {
    if (i % 2 === 0)
      add(`<rect class="stripe" x="0" y="${plotTop + i * ROW_HEIGHT}" width="${WIDTH}" height="${ROW_HEIGHT}" fill="#f6f8fa"/>`);
  });
  const tick = (x, text) => {
    add(`<line x1="${px(x)}" y1="${plotTop - 2}" x2="${px(x)}" y2="${plotBottom}" stroke="${GRID}" stroke-width="1"/>`);
    add(`<text x="${px(x)}" y="${plotBottom + 15}" font-size="11" fill="${MUTED}" text-anchor="middle">${text}</text>`);
  };
  for (const t of axis.ticks) {
    tick(xOf(t, 'worse'), formatFactor(t));
    tick(xOf(t, 'better'), formatFactor(t));
  }
  add(`<text x="${CENTER}" y="${plotBottom + 15}" font-size="11" fill="${MUTED}" text-anchor="middle">1×</text>`);

  // Rows: the metric's name and unit on the left, one bar per peer, each labelled with ours ÷ peer.
  rows.forEach((row, i) => {
    const top = plotTop + i * ROW_HEIGHT;
    add(`<text x="${MARGIN}" y="${top + 20}" font-size="13" font-weight="600">${escapeXml(row.label)}</text>`);
    add(`<text x="${MARGIN}" y="${top + 36}" font-size="11" fill="${MUTED}">${escapeXml(`${row.unit} · ${row.better} is better`)}</text>`);
    PEERS.forEach((peer, j) => {
      const y = top + 7 + j * (BAR_HEIGHT + 4);
      const bar = row.bars.find((b) => b.peer === peer.name);
      if (bar === undefined) {
        if (peersShown.includes(peer))
          add(`<text class="na" x="${CENTER + 6}" y="${px(y + 11)}" font-size="11" fill="${MUTED}">n/a</text>`);
        return;
      }
      const end = xOf(bar.factor, bar.direction);
      const cut = bar.factor > axis.limit;
      const x = Math.min(CENTER, end);
      const width = Math.max(Math.abs(end - CENTER), 1);
      add(
        `<rect class="bar" data-metric="${row.metric}" data-peer="${peer.name}" data-direction="${bar.direction}" x="${px(x)}" y="${y}" width="${px(width)}" height="${BAR_HEIGHT}" fill="${peer.color}"/>`,
      );
      if (cut) {
        // Two white slashes near the end: the bar is longer than the axis.
        const s = bar.direction === 'worse' ? end + 10 : end - 10;
        add(
          `<path d="M${px(s - 3)} ${y + BAR_HEIGHT} L${px(s + 1)} ${y} M${px(s + 2)} ${y + BAR_HEIGHT} L${px(s + 6)} ${y}" stroke="#ffffff" stroke-width="2"/>`,
        );
      }
      const right = bar.direction !== 'worse';
      add(
        `<text class="value" x="${px(right ? end + 5 : end - 5)}" y="${px(y + 11)}" font-size="12"${right ? '' : ' text-anchor="end"'}>${formatRatio(bar.ratio)}</text>`,
      );
    });
  });
  add(`<line x1="${CENTER}" y1="${plotTop - 2}" x2="${CENTER}" y2="${plotBottom}" stroke="${INK}" stroke-width="1.5"/>`);

  // What the bars mean.
  const cutNote = factors.some((f) => f > axis.limit) ? `Two slashes: a bar longer than the axis (${formatFactor(axis.limit)}). ` : '';
  const notes = [
    "Each label is ours ÷ peer, as in bench/README.md's table; each bar is that ratio on a log scale.",
    'A bar to the right means ours is better: lower for ms, KB, USD and rows, higher for calls/s and events/s.',
    `${cutNote}Drawn from the run's summary by bench/harness/chart.mjs.`,
  ];
  notes.forEach((note, i) => {
    add(`<text x="${MARGIN}" y="${footerTop + i * 15}" font-size="11" fill="${MUTED}">${escapeXml(note)}</text>`);
  });
  add('</g>');
  add('</svg>');
  return `${out.join('\n')}\n`;
}

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, '..', '..');

/** `node bench/harness/chart.mjs [results.json] [out.svg]`. */
async function main(argv) {
  const input = path.resolve(argv[0] ?? path.join(HERE, '..', 'results', 'latest.json'));
  // latest.json → chart.svg beside it; another summary, e.g. partial.json → chart-partial.svg.
  const name = path.basename(input, '.json');
  const output = path.resolve(argv[1] ?? path.join(path.dirname(input), name === 'latest' ? 'chart.svg' : `chart-${name}.svg`));
  const summary = JSON.parse(await readFile(input, 'utf8'));
  const fromRepo = path.relative(REPO, input);
  await writeFile(output, renderChart(summary, { source: fromRepo.startsWith('..') ? path.basename(input) : fromRepo }));
  console.error(`wrote ${path.relative(process.cwd(), output)} from ${path.relative(process.cwd(), input)}`);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  await main(process.argv.slice(2));
}
