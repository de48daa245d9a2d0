/**
 * bench/lib/pair-levels.ts: a paired point's pairs of adjacent runs, each run's level (CPU per
 * frame over its server's median at the point), and what the levels make of the pairs' ratios.
 */
import type { Target } from '../bench/lib/ipc';
import { chanceMet, levelFit, pointLevels } from '../bench/lib/pair-levels';
import type { RunRecord } from '../bench/lib/server-pool';

const run = (target: Target, rep: number, framesPerSec: number, serverCpuPerFrameUs: number): RunRecord =>
  ({ target, rep, framesPerSec, serverCpuPerFrameUs }) as RunRecord;

describe('bench pair levels', () => {
  it('pairs the runs next to each other in each repetition, whichever went first, and leaves other targets out', () => {
    const runs = [
      run('toolstream', 0, 80, 12),
      run('limit', 0, 100, 10),
      run('limit', 0, 50, 20),
      run('toolstream', 0, 40, 24),
      run('reference', 0, 1, 900),
      run('limit', 1, 100, 10),
      run('toolstream', 1, 80, 12),
      run('toolstream', 1, 80, 12),
      run('limit', 1, 50, 20),
    ];
    const { oursMedianCpuUs, otherMedianCpuUs, base, pairs } = pointLevels(runs);
    // Medians of 12, 24, 12, 12 and of 10, 20, 10, 20 (nearest rank).
    expect(oursMedianCpuUs).toBe(12);
    expect(otherMedianCpuUs).toBe(10);
    expect(base).toBeCloseTo(80 / 50, 12);
    expect(pairs.map((p) => [p.rep, p.ratio])).toEqual([
      [0, 0.8],
      [0, 0.8],
      [1, 0.8],
      [1, 1.6],
    ]);
    const last = pairs[3];
    expect([last.oursLevel, last.otherLevel, last.mismatch]).toEqual([1, 2, 2]);
    expect(last.relative).toBeCloseTo(1, 12);
    expect(last.ours.target).toBe('toolstream');
    expect(last.other.target).toBe('limit');
  });

  it('finds the whole spread in the levels when each pair is its base times its mismatch', () => {
    const pairs = [0.6, 0.8, 1, 1.1, 1.4].map((mismatch) => ({ mismatch, relative: mismatch }));
    const { slope, r2 } = levelFit(pairs);
    expect(slope).toBeCloseTo(1, 12);
    expect(r2).toBeCloseTo(1, 12);
    expect(levelFit(pairs.slice(0, 2)).r2).toBeNaN();
  });

  it('meets a target always or never when every pair reads its base, and draws the same on every call', () => {
    expect(chanceMet([1, 1], 0.86, 0.85)).toBe(1);
    expect(chanceMet([1, 1], 0.84, 0.85)).toBe(0);
    const relatives = [0.6, 0.9, 1, 1, 1.1];
    const once = chanceMet(relatives, 1, 0.85);
    expect(once).toBeGreaterThan(0);
    expect(once).toBeLessThan(1);
    expect(chanceMet(relatives, 1, 0.85)).toBe(once);
    expect(chanceMet(relatives, 1.1, 0.85)).toBeGreaterThan(once);
    expect(chanceMet([], 1, 0.85)).toBeNaN();
  });
});
