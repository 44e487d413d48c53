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
