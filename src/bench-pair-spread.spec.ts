/**
 * bench/pair-spread.ts: the spread of adjacent pairs over saved full runs, and the chance it
 * gives a repetition of n pairs to miss a target.
 */
import { normalCdf, pairSpread, withinRepetitionCorrelation } from '../bench/pair-spread';

describe('bench pair spread', () => {
  it('has the standard normal distribution function', () => {
    expect(normalCdf(0)).toBeCloseTo(0.5, 6);
    expect(normalCdf(-1.6449)).toBeCloseTo(0.05, 4);
    expect(normalCdf(1.96)).toBeCloseTo(0.975, 4);
  });

  it('takes the geometric mean and the log spread, and misses less with more pairs', () => {
    const s = pairSpread([0.8, 1.25, 1, 1], 0.85, false);
    expect(s.pairs).toBe(4);
    expect(s.geometricMean).toBeCloseTo(1, 12);
    expect(s.logSd).toBeCloseTo(Math.sqrt((2 * Math.log(1.25) ** 2) / 3), 12);
    expect([s.min, s.max]).toEqual([0.8, 1.25]);
    expect(s.missPerRepetition[2]).toBeGreaterThan(s.missPerRepetition[4]);
    expect(s.missPerRepetition[4]).toBeGreaterThan(s.missPerRepetition[6]);
    // Two pairs: z = ln(0.85) / (sd / sqrt 2).
    expect(s.missPerRepetition[2]).toBeCloseTo(normalCdf(Math.log(0.85) / (s.logSd / Math.SQRT2)), 12);
  });

  it('counts a bound to stay under from the other side', () => {
    const s = pairSpread([1.5, 2.5, 1.8, 2.2], 2, true);
    expect(s.missPerRepetition[2]).toBeGreaterThan(0.4);
    expect(s.missPerRepetition[2]).toBeLessThan(0.6);
    expect(pairSpread([1.5, 1.6, 1.7, 1.4], 2, true).missPerRepetition[2]).toBeLessThan(0.01);
  });

  it('refuses fewer than two positive ratios', () => {
    expect(() => pairSpread([1, NaN], 0.85, false)).toThrow(/two or more/);
  });

  it('correlates a repetition’s first two pairs', () => {
    expect(withinRepetitionCorrelation([[1, 1], [2, 2], [0.5, 0.5]])).toBeCloseTo(1, 12);
    expect(withinRepetitionCorrelation([[1, 1], [2, 0.5], [0.5, 2]])).toBeCloseTo(-1, 12);
    expect(withinRepetitionCorrelation([[1, 1], [2, 2]])).toBeNaN();
  });
});
