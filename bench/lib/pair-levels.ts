/**
 * What decides a paired point's pairs (lib/pairing.ts): the servers' level at the point, or the
 * level each run happened to get. A run's level is its server CPU per frame over its server's
 * median at that point in the same full run (1.4: it ran 40 % dearer than that server's usual).
 * One stream is bound by the server's CPU, so a pair's frames/s ratio follows the servers'
 * medians times the two runs' levels: a pair whose limit run is on a cheaper level than its
 * toolstream run reads low, whatever the servers are. bench/pair-levels.ts prints it per run.
 */
import type { Target } from './ipc';
import { adjacentPairs, PAIRED } from './pairing';
import type { RunRecord } from './server-pool';
import { centredSums, median } from './stats';

export interface PairLevel {
  rep: number;
  /** toolstream's frames/s over the limit's, in this pair of adjacent runs. */
  ratio: number;
  /** Each run's CPU per frame over its server's median at the point. */
  oursLevel: number;
  otherLevel: number;
  /** otherLevel / oursLevel: above 1 the pair flatters toolstream, below 1 it wrongs it. */
  mismatch: number;
  /** ratio over the point's base (PointLevels.base): what the two runs' draw made of it. */
  relative: number;
  ours: RunRecord;
  other: RunRecord;
}

export interface PointLevels {
  oursMedianCpuUs: number;
  otherMedianCpuUs: number;
  /** toolstream's median frames/s at the point over the limit's: the servers' ratio, whatever the runs drew. */
  base: number;
  pairs: PairLevel[];
}

/**
 * The adjacent pairs of a paired point's runs (each repetition's runs in the order they ran, as
 * adjacentRatios pairs them), with each run's level.
 */
export function pointLevels(runs: readonly RunRecord[], ours: Target = PAIRED[0], other: Target = PAIRED[1]): PointLevels {
  const mine = runs.filter((r) => r.target === ours || r.target === other);
  const oursMedianCpuUs = median(mine.filter((r) => r.target === ours).map((r) => r.serverCpuPerFrameUs));
  const otherMedianCpuUs = median(mine.filter((r) => r.target === other).map((r) => r.serverCpuPerFrameUs));
  const base = median(mine.filter((r) => r.target === ours).map((r) => r.framesPerSec)) / median(mine.filter((r) => r.target === other).map((r) => r.framesPerSec));
  const pairs: PairLevel[] = [];
  for (const rep of [...new Set(mine.map((r) => r.rep))]) {
    for (const [o, t] of adjacentPairs(mine.filter((r) => r.rep === rep), ours, other)) {
      const oursLevel = o.serverCpuPerFrameUs / oursMedianCpuUs;
      const otherLevel = t.serverCpuPerFrameUs / otherMedianCpuUs;
      const ratio = o.framesPerSec / t.framesPerSec;
      pairs.push({ rep, ratio, oursLevel, otherLevel, mismatch: otherLevel / oursLevel, relative: ratio / base, ours: o, other: t });
    }
  }
  return { oursMedianCpuUs, otherMedianCpuUs, base, pairs };
}

/**
 * Least squares of log(relative) on log(mismatch) over pairs (of one or several runs): the
 * slope, and the share of the pairs' spread around their points' bases (R²) that the runs'
 * levels account for. NaN with fewer than three pairs.
 */
export function levelFit(pairs: readonly Pick<PairLevel, 'relative' | 'mismatch'>[]): { slope: number; r2: number } {
  const points = pairs.filter((p) => p.relative > 0 && p.mismatch > 0).map((p) => [Math.log(p.mismatch), Math.log(p.relative)] as const);
  if (points.length < 3) return { slope: NaN, r2: NaN };
  const { sxy, sxx, syy } = centredSums(points);
  return { slope: sxx > 0 ? sxy / sxx : NaN, r2: sxx > 0 && syy > 0 ? (sxy * sxy) / (sxx * syy) : NaN };
}

/**
 * How often a full run's worst repetition reaches `target` when its servers' base is `base` and
 * each repetition's two pairs draw from `relatives` (pairs' ratio over their point's base, as
 * full runs drew them), independently: `draws` simulated runs of `reps` repetitions, each
 * repetition the geometric mean of two pairs (lib/pairing.ts). Seeded, so a run prints the same.
 */
export function chanceMet(relatives: readonly number[], base: number, target: number, reps = 3, draws = 20_000, seed = 1): number {
  if (relatives.length === 0) return NaN;
  let state = seed >>> 0;
  // mulberry32, in 32-bit integer steps (exact in JS): enough to resample, and the same figures on every run.
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = Math.imul(state ^ (state >>> 15), state | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const draw = (): number => relatives[Math.floor(next() * relatives.length)];
  let met = 0;
  for (let k = 0; k < draws; k++) {
    let worst = Infinity;
    for (let rep = 0; rep < reps; rep++) worst = Math.min(worst, base * Math.sqrt(draw() * draw()));
    if (worst >= target) met++;
  }
  return met / draws;
}
