/**
 * How the targets' runs of toolstream and the limit are paired (docs/performance.md, "How to
 * read the figures"). One stream's frames/s on this two-vCPU VM switches between a fast and a
 * slow regime with the host, for every server alike, and a switch between toolstream's run and
 * the limit's moved a repetition's ratio from ~0.85× to ~0.63×. So each repetition of a target's
 * point runs the two in an ABBA order (toolstream, limit, limit, toolstream; the next repetition
 * limit, toolstream, toolstream, limit): every run of one server has a run of the other next to
 * it in time, and each server goes first as often as last. A repetition's figure for a server is
 * the geometric mean over its two runs, so its ratio is the geometric mean of the ratios of the
 * two adjacent pairs: a switch between the pairs cancels out, one within a pair counts half.
 * A point may run more than one block per repetition (`blocks`: ABBA ABBA, then BAAB BAAB), each
 * adding two adjacent pairs to the repetition's geometric mean.
 */
import type { Target } from './ipc';

/** The pair of the targets: toolstream against the limit. */
export const PAIRED: readonly [Target, Target] = ['toolstream', 'limit'];

/**
 * The order of one repetition: the pair's ABBA block (BAAB on odd repetitions), `blocks` times,
 * first, then the other targets once each, in their order. Without pairing, the targets in their
 * order.
 */
export function repetitionOrder(targets: readonly Target[], rep: number, paired: boolean, blocks = 1): Target[] {
  const [a, b] = PAIRED;
  if (!paired || !targets.includes(a) || !targets.includes(b)) return [...targets];
  if (!Number.isInteger(blocks) || blocks < 1) throw new Error(`blocks must be a whole number >= 1, not ${blocks}`);
  const block = rep % 2 === 0 ? [a, b, b, a] : [b, a, a, b];
  return [...Array.from({ length: blocks }, () => block).flat(), ...targets.filter((t) => t !== a && t !== b)];
}

/** Geometric mean of the finite values; NaN when there is none (or one is not positive). */
export function geometricMean(values: readonly number[]): number {
  const finite = values.filter((v) => Number.isFinite(v));
  if (finite.length === 0 || finite.length < values.length || finite.some((v) => v <= 0)) return NaN;
  return Math.exp(finite.reduce((sum, v) => sum + Math.log(v), 0) / finite.length);
}

/**
 * The pairs of adjacent runs of an ABBA block, each as [ours, other], in the order run: for runs
 * listed in the order they ran, each run of one paired with the run of the other next to it (the
 * first two, the next two, and so on).
 */
export function adjacentPairs<R extends { target: Target }>(runs: readonly R[], ours: Target = PAIRED[0], other: Target = PAIRED[1]): [R, R][] {
  const block = runs.filter((r) => r.target === ours || r.target === other);
  const out: [R, R][] = [];
  for (let i = 0; i + 1 < block.length; i += 2) {
    const [x, y] = [block[i], block[i + 1]];
    const [o, t] = x.target === ours ? [x, y] : [y, x];
    if (o.target !== ours || t.target !== other) continue;
    out.push([o, t]);
  }
  return out;
}

/** The ratios of `ours` over `other` between adjacent runs of an ABBA block (adjacentPairs), in the order run. */
export function adjacentRatios<R extends { target: Target }>(runs: readonly R[], value: (r: R) => number, ours: Target = PAIRED[0], other: Target = PAIRED[1]): number[] {
  return adjacentPairs(runs, ours, other).map(([o, t]) => {
    const tv = value(t);
    return tv > 0 ? value(o) / tv : NaN;
  });
}
