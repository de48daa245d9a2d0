/**
 * bench/lib/pairing.ts: the order a target's repetition runs toolstream and the limit in, and
 * the ratios it takes between runs adjacent in time.
 */
import { adjacentRatios, geometricMean, repetitionOrder } from '../bench/lib/pairing';
import type { Target } from '../bench/lib/ipc';

const run = (target: Target, framesPerSec: number): { target: Target; framesPerSec: number } => ({ target, framesPerSec });

describe('bench pairing', () => {
  it('runs the pair ABBA, then BAAB, then the other targets once each', () => {
    const targets: Target[] = ['toolstream', 'reference', 'limit'];
    expect(repetitionOrder(targets, 0, true)).toEqual(['toolstream', 'limit', 'limit', 'toolstream', 'reference']);
    expect(repetitionOrder(targets, 1, true)).toEqual(['limit', 'toolstream', 'toolstream', 'limit', 'reference']);
    expect(repetitionOrder(targets, 2, true)).toEqual(['toolstream', 'limit', 'limit', 'toolstream', 'reference']);
  });

  it('runs as many blocks as asked, each ABBA (BAAB on odd repetitions), and refuses a count that is not one or more', () => {
    const targets: Target[] = ['toolstream', 'reference', 'limit'];
    expect(repetitionOrder(targets, 0, true, 2)).toEqual(['toolstream', 'limit', 'limit', 'toolstream', 'toolstream', 'limit', 'limit', 'toolstream', 'reference']);
    expect(repetitionOrder(targets, 1, true, 2)).toEqual(['limit', 'toolstream', 'toolstream', 'limit', 'limit', 'toolstream', 'toolstream', 'limit', 'reference']);
    expect(() => repetitionOrder(targets, 0, true, 0)).toThrow(/blocks/);
    expect(() => repetitionOrder(targets, 0, true, 1.5)).toThrow(/blocks/);
  });

  it('leaves the order alone when not paired or when the pair is not there', () => {
    expect(repetitionOrder(['toolstream', 'reference', 'limit'], 1, false)).toEqual(['toolstream', 'reference', 'limit']);
    expect(repetitionOrder(['toolstream', 'reference'], 0, true)).toEqual(['toolstream', 'reference']);
  });

  it('takes each ratio between the runs next to each other, whichever went first', () => {
    // The regime switched between the pairs: each pair still reads 0.8.
    const abba = [run('toolstream', 80), run('limit', 100), run('limit', 50), run('toolstream', 40)];
    expect(adjacentRatios(abba, (r) => r.framesPerSec)).toEqual([0.8, 0.8]);
    const baab = [run('limit', 50), run('reference', 1), run('toolstream', 40), run('toolstream', 80), run('limit', 100)];
    expect(adjacentRatios(baab, (r) => r.framesPerSec)).toEqual([0.8, 0.8]);
  });

  it('takes two ratios per block over two blocks, in the order run', () => {
    const order = repetitionOrder(['toolstream', 'limit'], 0, true, 2);
    const fps = [80, 100, 50, 40, 90, 100, 60, 30];
    const runs = order.map((target, i) => run(target, fps[i]));
    expect(adjacentRatios(runs, (r) => r.framesPerSec)).toEqual([0.8, 0.8, 0.9, 0.5]);
  });

  it('is symmetric: the geometric mean of the pairs is the ratio of the servers’ geometric means', () => {
    const abba = [run('toolstream', 80), run('limit', 90), run('limit', 50), run('toolstream', 45)];
    const pairs = adjacentRatios(abba, (r) => r.framesPerSec);
    const ours = geometricMean([80, 45]);
    const limit = geometricMean([90, 50]);
    expect(geometricMean(pairs)).toBeCloseTo(ours / limit, 12);
  });

  it('has no geometric mean without finite positive values', () => {
    expect(geometricMean([])).toBeNaN();
    expect(geometricMean([4, NaN])).toBeNaN();
    expect(geometricMean([4, 0])).toBeNaN();
    expect(geometricMean([2, 8])).toBeCloseTo(4, 12);
  });
});
