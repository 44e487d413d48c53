// Small, dependency-free statistics for the benchmark's samples.

/** Nearest-rank percentile (p in (0, 100]) of finite numbers; undefined when there are none. */
export function percentile(values, p) {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  if (sorted.length === 0) return undefined;
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[rank - 1];
}

/** The median (mean of the two middle values for an even count); undefined when empty. */
export function median(values) {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  if (sorted.length === 0) return undefined;
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** Rounds for display and JSON: 3 significant digits below 100, integers above. */
export function round(value) {
  if (!Number.isFinite(value)) return value;
  if (Math.abs(value) >= 100) return Math.round(value);
  return Number(value.toPrecision(3));
}
