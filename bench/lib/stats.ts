/** Small statistics helpers; inputs are never mutated. */

/** Nearest-rank percentile (p in 0..100) of an unsorted sample; NaN when empty. */
export function percentile(values: ArrayLike<number>, p: number): number {
  if (values.length === 0) return NaN;
  const sorted = Float64Array.from(values).sort();
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))];
}

export function median(values: readonly number[]): number {
  const finite = values.filter((v) => Number.isFinite(v));
  if (finite.length === 0) return NaN;
  return percentile(finite, 50);
}

/** The run whose `key` is the median among runs (so one run's figures stay consistent). */
export function medianBy<T>(runs: readonly T[], key: (run: T) => number): T {
  const sorted = [...runs].sort((a, b) => key(a) - key(b));
  return sorted[Math.floor((sorted.length - 1) / 2)];
}

export function ratio(a: number, b: number): number {
  return b > 0 ? a / b : NaN;
}
