import { inSlices, RENEWED_PER_CALL } from './redis-scripts';

describe('inSlices', () => {
  it('calls with at most RENEWED_PER_CALL ids, each call once the one before has answered, and returns what they returned in order', async () => {
    const ids = Array.from({ length: RENEWED_PER_CALL * 2 + 5 }, (_, i) => `t${i}`);
    const calls: string[][] = [];
    let inFlight = 0;
    let most = 0;
    const result = await inSlices(ids, async (slice) => {
      calls.push(slice);
      inFlight += 1;
      most = Math.max(most, inFlight);
      await new Promise((resolve) => setImmediate(resolve));
      inFlight -= 1;
      return slice.filter((id) => id.endsWith('3'));
    });
    expect(calls.map((slice) => slice.length)).toEqual([RENEWED_PER_CALL, RENEWED_PER_CALL, 5]);
    expect(calls.flat()).toEqual(ids);
    expect(most).toBe(1);
    expect(result).toEqual(ids.filter((id) => id.endsWith('3')));
    expect(await inSlices([], async () => ['never'])).toEqual([]);
  });
});
