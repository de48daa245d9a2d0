/**
 * `node -r ts-node/register/transpile-only bench/pair-spread.ts <results.json>...`
 *
 * How widely one adjacent pair of toolstream's and the limit's runs spreads, over the saved
 * results of several full runs (each run's bench/results.json, kept aside between runs): for
 * each paired target (the empty task, the 30,000-call point, the 1,000-stream row) it prints the
 * pairs' count, their geometric mean, the standard deviation of their logarithms, the lowest and
 * highest pair, and, under a normal model of the logs, the chance that one repetition of one,
 * two or three ABBA blocks (2, 4, 6 pairs) misses the target. That is what config.pairedCurveBlocks
 * rests on: a repetition's figure is the geometric mean of its pairs, so its log spread falls with
 * the square root of their number when the pairs are independent. It also prints the correlation
 * of the logs of each repetition's first two pairs, which says how far they are: near 0, the
 * model holds; positive, a repetition's pairs share part of their error and more blocks help
 * less than it says.
 */
import { readFileSync } from 'node:fs';
import { centredSums } from './lib/stats';

interface PairedTarget {
  label: string;
  /** The target's bound on the ratio, and whether the ratio must stay under it (CPU) or over it (frames/s). */
  bound: number;
  under: boolean;
  pairs: (results: ResultsFile) => number[][] | undefined;
}

interface ResultsFile {
  emptyTask?: { adjacentOursOverLimit?: number[][] };
  curves?: { ratios?: Array<{ toolCalls: number; adjacentOursOverLimit?: number[][] }> };
  sideBySide?: Array<{ kind?: string; streams?: number; adjacentOursOverLimit?: number[][] }>;
}

const TARGETS: PairedTarget[] = [
  { label: 'empty task (CPU, <= 2x)', bound: 2, under: true, pairs: (r) => r.emptyTask?.adjacentOursOverLimit },
  {
    label: '30,000 calls (frames/s, >= 0.85x)',
    bound: 0.85,
    under: false,
    pairs: (r) => r.curves?.ratios?.find((p) => p.toolCalls === 30_000)?.adjacentOursOverLimit,
  },
  {
    label: '1,000 streams (frames/s, >= 0.7x)',
    bound: 0.7,
    under: false,
    pairs: (r) => r.sideBySide?.find((row) => row.streams === 1_000 && row.adjacentOursOverLimit)?.adjacentOursOverLimit,
  },
];

/** The standard normal distribution function (Abramowitz and Stegun 7.1.26 for erf; error < 1.5e-7). */
export function normalCdf(z: number): number {
  const t = 1 / (1 + (0.3275911 * Math.abs(z)) / Math.SQRT2);
  const poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
  const erf = 1 - poly * Math.exp(-(z * z) / 2);
  return z >= 0 ? (1 + erf) / 2 : (1 - erf) / 2;
}

export interface PairSpread {
  pairs: number;
  geometricMean: number;
  logSd: number;
  min: number;
  max: number;
  /** Chance that a repetition of n pairs misses the bound, for n = 2, 4, 6. */
  missPerRepetition: Record<2 | 4 | 6, number>;
}

export function pairSpread(values: readonly number[], bound: number, under: boolean): PairSpread {
  const logs = values.filter((v) => Number.isFinite(v) && v > 0).map(Math.log);
  if (logs.length < 2) throw new Error('pairSpread needs two or more positive ratios');
  const mean = logs.reduce((s, v) => s + v, 0) / logs.length;
  const logSd = Math.sqrt(logs.reduce((s, v) => s + (v - mean) ** 2, 0) / (logs.length - 1));
  const miss = (n: number): number => {
    const z = (Math.log(bound) - mean) / (logSd / Math.sqrt(n));
    return under ? 1 - normalCdf(z) : normalCdf(z);
  };
  return {
    pairs: logs.length,
    geometricMean: Math.exp(mean),
    logSd,
    min: Math.exp(Math.min(...logs)),
    max: Math.exp(Math.max(...logs)),
    missPerRepetition: { 2: miss(2), 4: miss(4), 6: miss(6) },
  };
}

/** Pearson correlation of the logs of each repetition's first two pairs (NaN under three repetitions). */
export function withinRepetitionCorrelation(reps: readonly number[][]): number {
  const two = reps.filter((p) => p.length >= 2 && p[0] > 0 && p[1] > 0).map((p) => [Math.log(p[0]), Math.log(p[1])] as const);
  if (two.length < 3) return NaN;
  const { sxy, sxx, syy } = centredSums(two);
  return sxy / Math.sqrt(sxx * syy);
}

function main(files: string[]): void {
  if (files.length === 0) throw new Error('usage: bench/pair-spread.ts <results.json>...');
  const results = files.map((f) => JSON.parse(readFileSync(f, 'utf8')) as ResultsFile);
  const pct = (p: number): string => `${(100 * p).toFixed(1)} %`;
  for (const target of TARGETS) {
    const reps = results.flatMap((r) => target.pairs(r) ?? []);
    const values = reps.flat();
    if (values.length < 2) {
      console.log(`${target.label}: fewer than two pairs in these files`);
      continue;
    }
    const s = pairSpread(values, target.bound, target.under);
    // A run misses when any of its three repetitions does.
    const perRun = (p: number): string => pct(1 - (1 - p) ** 3);
    console.log(
      `${target.label}: ${s.pairs} pairs from ${files.length} runs, geometric mean ${s.geometricMean.toFixed(3)}, log sd ${s.logSd.toFixed(3)}, ` +
        `pairs ${s.min.toFixed(2)}-${s.max.toFixed(2)}, correlation within a repetition ${withinRepetitionCorrelation(reps).toFixed(2)}; a repetition misses with 2 / 4 / 6 pairs ${pct(s.missPerRepetition[2])} / ${pct(s.missPerRepetition[4])} / ` +
        `${pct(s.missPerRepetition[6])} (a run of 3: ${perRun(s.missPerRepetition[2])} / ${perRun(s.missPerRepetition[4])} / ${perRun(s.missPerRepetition[6])})`,
    );
  }
}

if (require.main === module) main(process.argv.slice(2));
