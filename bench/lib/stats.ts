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

/**
 * A figure over the repetitions of one run: the extremes, the median, and every repetition in
 * the order it was measured (so results.json keeps them all).
 */
export interface Spread {
  min: number;
  median: number;
  max: number;
  reps: number[];
}

export function spread(reps: readonly number[]): Spread {
  const finite = reps.filter((v) => Number.isFinite(v));
  return {
    min: finite.length ? Math.min(...finite) : NaN,
    median: median(finite),
    max: finite.length ? Math.max(...finite) : NaN,
    reps: [...reps],
  };
}

/** The repetition that is worst for a target: the lowest when higher is better, else the highest. */
export function worst(s: Spread, higherIsBetter: boolean): number {
  return higherIsBetter ? s.min : s.max;
}

export function ratio(a: number, b: number): number {
  return b > 0 ? a / b : NaN;
}

/** Share of the values left out at either end by the trimmed mean. */
const TRIM = 0.2;

/**
 * Mean of the values between the lowest and highest fifth: a run that another process slowed
 * down, or that a major GC happened to land in, does not move it, and it still counts the
 * scavenges every run pays for its own garbage (the executor overhead's runs, the empty-task
 * warm-up's batches).
 */
export function trimmedMean(values: readonly number[], trim = TRIM): number {
  const sorted = [...values].sort((a, b) => a - b);
  const cut = Math.floor(sorted.length * trim);
  const kept = sorted.slice(cut, sorted.length - cut);
  return kept.reduce((sum, v) => sum + v, 0) / kept.length;
}

/**
 * The centred sums of a set of points (x, y): sxy, sxx and syy. Pearson's correlation is
 * sxy / sqrt(sxx syy), a least-squares slope sxy / sxx.
 */
export function centredSums(points: readonly (readonly [number, number])[]): { sxy: number; sxx: number; syy: number } {
  const n = points.length;
  const mx = points.reduce((s, p) => s + p[0], 0) / n;
  const my = points.reduce((s, p) => s + p[1], 0) / n;
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  for (const [x, y] of points) {
    sxy += (x - mx) * (y - my);
    sxx += (x - mx) ** 2;
    syy += (y - my) ** 2;
  }
  return { sxy, sxx, syy };
}
