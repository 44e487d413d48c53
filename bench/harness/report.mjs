// Turns the per-round samples into per-peer medians, ratios of `ours` against each other peer,
// and a plain-text table.
import { median, round } from './stats.mjs';

/**
 * samples[workloadId][peerName] = [{ round, metrics, status?, error?, raw? }, …]
 * Returns rows: one per metric, with each peer's median and the rounds it came from.
 */
export function summarize(workloads, peerNames, samples) {
  const rows = [];
  for (const workload of workloads) {
    for (const metric of workload.metrics) {
      const perPeer = {};
      for (const peer of peerNames) {
        const runs = samples[workload.id]?.[peer] ?? [];
        const values = runs.map((s) => s.metrics?.[metric.key]).filter((v) => v !== null && v !== undefined && Number.isFinite(v));
        const notes = [...new Set(runs.map((s) => s.error ?? s.status).filter(Boolean))];
        perPeer[peer] = { median: median(values), n: values.length, rounds: runs.length, values, notes };
      }
      rows.push({ workload: workload.id, key: metric.key, label: metric.label, better: metric.better, kind: metric.kind, perPeer });
    }
  }
  return rows;
}

/** ours ÷ other for each metric (below 1 is better for ours where lower is better, above 1 where higher is). */
export function ratios(rows, peerNames, ours = 'ours') {
  const out = [];
  if (!peerNames.includes(ours)) return out;
  for (const row of rows) {
    if (row.kind === 'yesno') continue;
    const a = row.perPeer[ours].median;
    for (const peer of peerNames) {
      if (peer === ours) continue;
      const b = row.perPeer[peer].median;
      const ratio = a !== undefined && b !== undefined && b !== 0 ? a / b : null;
      out.push({ metric: `${row.workload}.${row.key}`, better: row.better, peer, ours: a ?? null, other: b ?? null, ratio });
    }
  }
  return out;
}

function cell(row, peer) {
  const p = row.perPeer[peer];
  if (row.kind === 'yesno') {
    if (p.n === 0) return p.notes.length ? 'n/a' : '-';
    const yes = p.values.filter((v) => v === 1).length;
    return `${yes === p.n ? 'yes' : yes === 0 ? 'no' : 'mixed'} ${yes}/${p.n}`;
  }
  if (p.median === undefined) return p.notes.length ? (p.notes[0].startsWith('cannot resume') ? 'cannot resume' : 'n/a') : '-';
  return String(round(p.median)) + (p.n < p.rounds ? '*' : '');
}

/** The table as text, then every distinct note (refusals, errors) per peer and workload. */
export function formatTable(rows, peerNames, ratioList, ours = 'ours') {
  const others = peerNames.includes(ours) ? peerNames.filter((p) => p !== ours) : [];
  const header = ['metric', 'better', ...peerNames, ...others.map((p) => `ours/${p}`)];
  const lines = [header];
  for (const row of rows) {
    const ratioCells = others.map((peer) => {
      const r = ratioList.find((x) => x.metric === `${row.workload}.${row.key}` && x.peer === peer);
      return r?.ratio == null ? '-' : `${round(r.ratio)}x`;
    });
    lines.push([row.label, row.better, ...peerNames.map((peer) => cell(row, peer)), ...ratioCells]);
  }
  const widths = header.map((_, i) => Math.max(...lines.map((line) => String(line[i]).length)));
  const text = lines.map((line) => line.map((c, i) => (i === 0 ? String(c).padEnd(widths[i]) : String(c).padStart(widths[i]))).join('  '));
  text.splice(1, 0, widths.map((w) => '-'.repeat(w)).join('  '));
  const notes = [];
  for (const row of rows) {
    for (const peer of peerNames) {
      for (const note of row.perPeer[peer].notes) {
        const line = `  ${row.workload} ${peer}: ${note}`;
        if (!notes.includes(line)) notes.push(line);
      }
    }
  }
  if (notes.length) text.push('', 'notes (* = median of fewer rounds than run):', ...notes);
  return text.join('\n');
}

/** What a summary carries over from the raw result unchanged (the run's metadata and figures). */
const SUMMARY_KEYS = [
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
];

/**
 * The committed shape of a run: the raw result (run.mjs) without its samples, plus, from them,
 * `per_round[metric][peer]` — the metric's value in each round (index r - 1 for round r; null
 * where that round failed, was skipped or gave no value; W6 has round 1 only) — and
 * `notes[workload][peer]`, the distinct refusals and errors. Every value is kept as measured.
 * `rawFile`, where the samples were written (relative to the repository root), is recorded as
 * `raw_samples`. Pure: raw result in, summary out.
 */
export function toSummary(result, { rawFile } = {}) {
  const summary = {};
  for (const key of SUMMARY_KEYS) {
    if (key === 'medians' && rawFile !== undefined) summary.raw_samples = rawFile;
    if (result[key] !== undefined) summary[key] = result[key];
  }
  const perRound = {};
  const notes = {};
  for (const workload of result.workloads ?? []) {
    const byPeer = result.samples?.[workload.id] ?? {};
    for (const metric of workload.metrics) {
      const row = (perRound[`${workload.id}.${metric.key}`] = {});
      for (const [peer, runs] of Object.entries(byPeer)) {
        const values = [];
        for (const sample of runs) {
          const value = sample.metrics?.[metric.key];
          values[sample.round - 1] = Number.isFinite(value) ? value : null;
        }
        row[peer] = Array.from(values, (v) => v ?? null);
      }
    }
    for (const [peer, runs] of Object.entries(byPeer)) {
      const distinct = [...new Set(runs.map((s) => s.error ?? s.status).filter(Boolean))];
      if (distinct.length) (notes[workload.id] ??= {})[peer] = distinct;
    }
  }
  summary.per_round = perRound;
  summary.notes = notes;
  summary.table = result.table;
  return summary;
}

const isPrimitive = (v) => v === null || v === undefined || typeof v !== 'object';

/**
 * JSON with two-space indentation, kept short: an array of numbers (or null, booleans) and an
 * object of at most 8 primitive values (a ratio, a peer, one metric's medians) take one line.
 */
export function toJson(value, indent = '') {
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]';
    if (value.every((v) => isPrimitive(v) && typeof v !== 'string')) {
      return `[${value.map((v) => JSON.stringify(v ?? null)).join(', ')}]`;
    }
    const inner = `${indent}  `;
    return `[\n${value.map((v) => inner + (v === undefined ? 'null' : toJson(v, inner))).join(',\n')}\n${indent}]`;
  }
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value).filter(([, v]) => v !== undefined && typeof v !== 'function');
    if (entries.length === 0) return '{}';
    if (entries.length <= 8 && entries.every(([, v]) => isPrimitive(v))) {
      return `{ ${entries.map(([k, v]) => `${JSON.stringify(k)}: ${JSON.stringify(v) ?? 'null'}`).join(', ')} }`;
    }
    const inner = `${indent}  `;
    return `{\n${entries.map(([k, v]) => `${inner}${JSON.stringify(k)}: ${toJson(v, inner)}`).join(',\n')}\n${indent}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
