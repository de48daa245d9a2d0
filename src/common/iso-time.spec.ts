import fc from 'fast-check';
import { isoTime } from './iso-time';

describe('isoTime', () => {
  it('writes a time exactly as toISOString does, whatever times it wrote before (same millisecond, same day, another day, years 0-9999 and past)', () => {
    const day = 86_400_000;
    const start = fc.oneof(fc.integer({ min: -8.64e15, max: 8.64e15 }), fc.integer({ min: -62_167_219_200_000 - 2 * day, max: 253_402_300_799_999 + 2 * day }), fc.integer({ min: 1.7e12, max: 1.9e12 }));
    const step = fc.oneof(fc.constant(0), fc.integer({ min: -3, max: 3 }), fc.integer({ min: -2 * day, max: 2 * day }), fc.double({ min: -5, max: 5, noNaN: true }));
    fc.assert(
      fc.property(start, fc.array(step, { maxLength: 30 }), (first, steps) => {
        let ms = first;
        for (const delta of [0, ...steps]) {
          ms = Math.max(-8.64e15, Math.min(8.64e15, ms + delta));
          expect(isoTime(ms)).toBe(new Date(ms).toISOString());
        }
      }),
      { numRuns: 2_000 },
    );
  });
});
