/**
 * `node -r ts-node/register/transpile-only bench/pair-levels.ts <results.json>... [--side]`
 *
 * Reads full runs' results.json (this repository's bench/results.json; earlier ones with `git
 * show <commit>:bench/results.json > file`) and prints, for the paired one-stream point (30,000
 * calls) or, with `--side`, the paired 1,000-stream row: per run, the point's base (toolstream's
 * median frames/s over the limit's) and each pair of adjacent runs with its ratio, each run's
 * level (CPU per frame over its server's median at the point: lib/pair-levels.ts), their
 * mismatch, and each run's user and system CPU and context switches per frame. Then over every
 * file: how much of the pairs' spread around their bases the runs' levels account for (R² of
 * log relative on log mismatch), each server's levels, the pairs below 0.75x, and how often a
 * full run's worst repetition would reach the target (0.85x; 0.7x with `--side`) at a few bases
 * if its pairs drew from these. Nothing is measured: it reads what the full runs kept.
 */
import { readFileSync } from 'node:fs';
import { chanceMet, levelFit, pointLevels, type PairLevel } from './lib/pair-levels';
import type { BenchResults } from './lib/report';
import { FRAMES_PER_TOOL_CALL } from './lib/scenario';
import type { RunRecord } from './lib/server-pool';
import { median, percentile } from './lib/stats';

/** The paired point's runs: the curves' 30,000-call point (one task per run), or the side-by-side 1,000-stream row. */
function runsOf(results: BenchResults, side: boolean): RunRecord[] {
  if (side) return results.sideBySide?.find((r) => r.kind === 'throughput' && r.streams === 1_000)?.runs ?? [];
  return (results.curves?.runs ?? []).filter((r) => r.streams === 1 && r.framesExpected === 30_000 * FRAMES_PER_TOOL_CALL);
}

const f2 = (x: number): string => x.toFixed(2);
const counts = (r: RunRecord): string =>
  `${r.serverCpuPerFrameUs.toFixed(1)} µs (user ${r.serverUserPerFrameUs?.toFixed(1) ?? '?'} + system ${r.serverSystemPerFrameUs?.toFixed(1) ?? '?'}), ` +
  `${r.contextSwitchesPerFrame?.toFixed(2) ?? '?'} cs/frame`;
const spreadOf = (xs: number[]): string => `${f2(Math.min(...xs))} / ${f2(median(xs))} / ${f2(Math.max(...xs))}`;

function main(): void {
  const args = process.argv.slice(2);
  const side = args.includes('--side');
  const point = side ? '1,000 streams' : '30,000 calls';
  const target = side ? 0.7 : 0.85;
  const files = args.filter((a) => !a.startsWith('--'));
  if (files.length === 0) throw new Error('usage: bench/pair-levels.ts <results.json>... [--side]');
  const all: PairLevel[] = [];
  for (const file of files) {
    const results = JSON.parse(readFileSync(file, 'utf8')) as BenchResults;
    const { oursMedianCpuUs, otherMedianCpuUs, base, pairs } = pointLevels(runsOf(results, side));
    if (pairs.length === 0) {
      console.log(`${file}: no paired runs at ${point}`);
      continue;
    }
    console.log(`${file} (${results.meta.date}): base ${f2(base)}x; median CPU per frame toolstream ${oursMedianCpuUs.toFixed(1)} µs, limit ${otherMedianCpuUs.toFixed(1)} µs`);
    for (const p of pairs) {
      console.log(
        `  rep ${p.rep + 1}: ${f2(p.ratio)}x (${f2(p.relative)} of the base); levels toolstream ${f2(p.oursLevel)}, limit ${f2(p.otherLevel)} ` +
          `(mismatch ${f2(p.mismatch)}); toolstream ${counts(p.ours)}; limit ${counts(p.other)}`,
      );
    }
    all.push(...pairs);
  }
  if (all.length === 0) return;
  const { slope, r2 } = levelFit(all);
  console.log(
    `${point}, ${all.length} pairs: ratio ${spreadOf(all.map((p) => p.ratio))} (min / median / max), ` +
      `${spreadOf(all.map((p) => p.relative))} of their bases; log relative on log mismatch: slope ${f2(slope)}, R² ${f2(r2)}`,
  );
  const levels = (pick: (p: PairLevel) => number): string => {
    const xs = all.map(pick);
    return `${f2(Math.min(...xs))} / ${f2(percentile(xs, 10))} / ${f2(median(xs))} / ${f2(percentile(xs, 90))} / ${f2(Math.max(...xs))}`;
  };
  console.log(`levels (min / p10 / median / p90 / max): toolstream ${levels((p) => p.oursLevel)}, limit ${levels((p) => p.otherLevel)}`);
  const low = all.filter((p) => p.ratio < 0.75);
  if (low.length) {
    console.log(
      `${low.length} pairs below 0.75x: mismatch ${spreadOf(low.map((p) => p.mismatch))}, toolstream level ${spreadOf(low.map((p) => p.oursLevel))}, ` +
        `limit level ${spreadOf(low.map((p) => p.otherLevel))}; ${spreadOf(low.map((p) => p.relative))} of their bases`,
    );
  }
  const relatives = all.map((p) => p.relative);
  const bases = [0.9, 0.95, 1, 1.05, 1.1].map((b) => b * (target / 0.85));
  console.log(
    `a full run's worst repetition >= ${target}x, its pairs drawn from these (independently): ` +
      bases.map((b) => `base ${f2(b)}x ${Math.round(100 * chanceMet(relatives, b, target))} %`).join(', '),
  );
}

main();
