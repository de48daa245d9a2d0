import { emptiedForReuse } from './reused-list';

describe('emptiedForReuse', () => {
  it('empties a short list in place, and lets a longer one go for a new empty one', () => {
    const short = [1, 2, 3];
    expect(emptiedForReuse(short, 3)).toBe(short);
    expect(short).toEqual([]);
    const long = [1, 2, 3, 4];
    const next = emptiedForReuse(long, 3);
    expect(next).not.toBe(long);
    expect(next).toEqual([]);
    // The list let go is left as it was: whoever still reads it (nobody should) sees no change.
    expect(long).toEqual([1, 2, 3, 4]);
  });

  it('keeps any list without a bound', () => {
    const list = Array.from({ length: 1_000 }, (_, i) => i);
    expect(emptiedForReuse(list)).toBe(list);
    expect(list).toHaveLength(0);
  });
});
